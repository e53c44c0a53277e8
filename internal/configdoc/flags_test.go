package configdoc

import (
	"bytes"
	"flag"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The parser reads what the flag package writes: a flag set with every
// shape of entry, printed by PrintDefaults, parses back to its flags.
func TestParseDefaultsReadsPrintDefaults(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("b", false, "one-letter bool: its usage shares the line")
	fs.Bool("enabled", true, "a bool whose default is shown")
	fs.Int("workers", 50, "an int")
	fs.Int("zero", 0, "an int at its zero value: no default shown")
	fs.String("addr", ":8080", "a string, quoted")
	fs.String("ns", "", "ends like a default but is not one (default: $NS).")
	fs.Duration("lease", 15*time.Second, "a duration")
	fs.Float64("qps", 0.5, "first line\nsecond line")
	fs.String("pipe", "a|b", "a `path` to a file")
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	fs.PrintDefaults()

	got, err := ParseDefaults("Usage of x:\n" + buf.String())
	if err != nil {
		t.Fatal(err)
	}
	want := []Flag{
		{Name: "addr", Type: "string", Default: `":8080"`, Usage: "a string, quoted"},
		{Name: "b", Type: "bool", Usage: "one-letter bool: its usage shares the line"},
		{Name: "enabled", Type: "bool", Default: "true", Usage: "a bool whose default is shown"},
		{Name: "lease", Type: "duration", Default: "15s", Usage: "a duration"},
		{Name: "ns", Type: "string", Usage: "ends like a default but is not one (default: $NS)."},
		{Name: "pipe", Type: "path", Default: `"a|b"`, Usage: "a path to a file"},
		{Name: "qps", Type: "float", Default: "0.5", Usage: "first line\nsecond line"},
		{Name: "workers", Type: "int", Default: "50", Usage: "an int"},
		{Name: "zero", Type: "int", Usage: "an int at its zero value: no default shown"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseDefaults (-want +got):\n%s\nfrom:\n%s", diff, buf.String())
	}
}

func TestParseDefaultsRejectsOtherText(t *testing.T) {
	for name, help := range map[string]string{
		"usage before a flag": "    \tdangling usage\n",
		"stray line":          "  -a int\n    \tusage\nnot a flag line\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseDefaults(help); err == nil {
				t.Errorf("no error for %q", help)
			}
		})
	}
}
