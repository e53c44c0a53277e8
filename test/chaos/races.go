package main

import (
	"bufio"
	"debug/buildinfo"
	"fmt"
	"os"
	"strings"
)

// raceMark opens every report of Go's race detector.
const raceMark = "WARNING: DATA RACE"

// raceResult is what the operators' logs say of data races.
type raceResult struct {
	// Checked: the operator binary was built with -race, so a race it
	// ran into is in its log.
	Checked bool
	// Reports are the race reports found, by log.
	Reports map[string]int
}

func (r raceResult) total() int {
	n := 0
	for _, c := range r.Reports {
		n += c
	}
	return n
}

func (r raceResult) text() string {
	if !r.Checked {
		return "not looked for: the operator was built without -race"
	}
	return fmt.Sprintf("%d (operator built with -race)", r.total())
}

// builtWithRace reports whether the Go binary at path was built with
// -race.
func builtWithRace(path string) (bool, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("reading the build information of %s: %w", path, err)
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true", nil
		}
	}
	return false, nil
}

// races counts the race reports in the operators' logs. A leader killed
// with SIGKILL never reaches the race detector's exit status, so the
// reports themselves are read.
func races(operator string, logs []string) (raceResult, error) {
	checked, err := builtWithRace(operator)
	if err != nil || !checked {
		return raceResult{}, err
	}
	r := raceResult{Checked: true, Reports: map[string]int{}}
	for _, path := range logs {
		n, err := countRaceReports(path)
		if err != nil {
			return r, err
		}
		if n > 0 {
			r.Reports[path] = n
		}
	}
	return r, nil
}

func countRaceReports(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	n := 0
	for sc.Scan() {
		if strings.Contains(sc.Text(), raceMark) {
			n++
		}
	}
	return n, sc.Err()
}
