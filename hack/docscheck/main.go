// Command docscheck fails when a user page carries a date, a time of day or
// a commit hash (make docscheck, part of make verify). User pages say what
// is true now; when something was measured, and on which commit, belongs in
// the engineering records (docs/records/), which it does not read, beside
// the command that measured it. CHANGELOG.md is not a user page in this
// sense: its releases have dates.
//
// With no arguments it reads README.md, CONTRIBUTING.md, SECURITY.md and
// docs/*.md (not the folders under docs/); given files, it reads those. It
// prints file:line: what it found, for each hit, and exits 1 if there was
// any.
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

const month = `(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?`

// A kind of finding, and the pattern that finds it.
type pattern struct {
	kind string
	re   *regexp.Regexp
}

var patterns = []pattern{
	// 2026-12-05, also inside 2026-12-05T20:36:00Z.
	{"date", regexp.MustCompile(`\b(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])`)},
	// 5 Dec 2026, 5 December 2026.
	{"date", regexp.MustCompile(`\b\d{1,2} ` + month + `,? (?:19|20)\d\d\b`)},
	// Dec 5, 2026; December 5 2026; December 2026.
	{"date", regexp.MustCompile(`\b` + month + ` (?:\d{1,2}(?:st|nd|rd|th)?,? )?(?:19|20)\d\d\b`)},
	// 20:36, 20:36:27, 20:36 UTC, 19:42–19:53; not ports (:8080), hosts
	// and ports (127.0.0.1:15000) or image tags (debian:12).
	{"time of day", regexp.MustCompile(`(?:^|[^\w.:])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?\b`)},
}

// hashRE finds candidates for a commit hash: 7 to 40 lowercase hex digits
// as a whole word. isHash keeps those with both a digit and a letter, so
// numbers (1044571) and words (deadbeef, facade) pass.
var hashRE = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)

// notHashes are words of the docs that look like a commit hash.
var notHashes = map[string]bool{
	"ed25519": true, // the SSH key type
}

func isHash(w string) bool {
	if notHashes[w] {
		return false
	}
	return strings.ContainsAny(w, "0123456789") && strings.ContainsAny(w, "abcdef")
}

// findings returns what the line holds that a user page must not, as
// "kind: text" strings.
func findings(line string) []string {
	var out []string
	for _, p := range patterns {
		for _, m := range p.re.FindAllString(line, -1) {
			out = append(out, fmt.Sprintf("%s: %s", p.kind, strings.TrimLeft(m, " ([`*_\"'")))
		}
	}
	for _, loc := range hashRE.FindAllStringIndex(line, -1) {
		w := line[loc[0]:loc[1]]
		// A UUID's groups (a metadata.uid in an example) are not commits.
		if !isHash(w) || (loc[0] > 0 && line[loc[0]-1] == '-') || (loc[1] < len(line) && line[loc[1]] == '-') {
			continue
		}
		out = append(out, "commit hash: "+w)
	}
	return out
}

// userPages lists the pages docscheck reads by default.
func userPages() ([]string, error) {
	pages := []string{"README.md", "CONTRIBUTING.md", "SECURITY.md"}
	docs, err := filepath.Glob("docs/*.md")
	return append(pages, docs...), err
}

func check(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// Read only: a failed Close loses nothing.
	defer func() { _ = f.Close() }()
	var hits []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; s.Scan(); n++ {
		for _, h := range findings(s.Text()) {
			hits = append(hits, fmt.Sprintf("%s:%d: %s", path, n, h))
		}
	}
	return hits, s.Err()
}

func main() {
	paths := os.Args[1:]
	if len(paths) == 0 {
		var err error
		if paths, err = userPages(); err != nil {
			fmt.Fprintln(os.Stderr, "docscheck:", err)
			os.Exit(2)
		}
	}
	failed := false
	for _, p := range paths {
		hits, err := check(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "docscheck:", err)
			os.Exit(2)
		}
		for _, h := range hits {
			fmt.Println(h)
			failed = true
		}
	}
	if failed {
		fmt.Println("docscheck: user pages carry no dates, times of day or commit hashes; put them in docs/records/")
		os.Exit(1)
	}
}
