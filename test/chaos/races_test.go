package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The race detector's reports in an operator's log are counted, one per
// report, whatever surrounds them.
func TestRaceReportsAreCounted(t *testing.T) {
	dir := t.TempDir()
	clean, racy := filepath.Join(dir, "operator-a.log"), filepath.Join(dir, "operator-b.log")
	if err := os.WriteFile(clean, []byte("I1206 reconciled\n---- chaos: start 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	report := "==================\nWARNING: DATA RACE\nWrite at 0x00c000 by goroutine 7:\n  main.f()\n==================\n"
	if err := os.WriteFile(racy, []byte("I1206 reconciled\n"+report+"I1206 more\n"+report), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{clean: 0, racy: 2} {
		if got, err := countRaceReports(path); err != nil || got != want {
			t.Errorf("%s: %d reports (err %v), want %d", filepath.Base(path), got, err, want)
		}
	}
	if _, err := countRaceReports(filepath.Join(dir, "missing.log")); err == nil {
		t.Error("a missing log counted as clean")
	}
}

// A binary's -race build setting is read from the binary itself: this
// test's own binary says what go test was asked for.
func TestBuiltWithRaceReadsTheBinary(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got, err := builtWithRace(self)
	if err != nil {
		t.Fatal(err)
	}
	if got != raceEnabled {
		t.Errorf("builtWithRace(test binary) = %t, want %t", got, raceEnabled)
	}
	if _, err := builtWithRace(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing binary read as built without -race")
	}
}
