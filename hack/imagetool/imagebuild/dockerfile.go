package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// instruction is one line of a Dockerfile: its keyword (upper case), its
// --flags and the rest of the line, continuations joined.
type instruction struct {
	cmd   string
	flags map[string]string
	args  string
	line  int
}

// parseDockerfile splits a Dockerfile into instructions. It knows what
// upstream's Dockerfiles use: comments, backslash continuations (with
// comment lines inside them skipped, as Docker does) and --flag=value
// options; no parser directives, heredocs or escape character changes.
func parseDockerfile(path string) ([]instruction, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimRight(raw, " \t\r")
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(trimmed, "#") {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\"))
			continue
		}
		cur.WriteString(line)
		in, err := parseInstruction(cur.String(), start)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, start, err)
		}
		out = append(out, in)
		cur.Reset()
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("%s:%d: unterminated continuation", path, start)
	}
	return out, nil
}

func parseInstruction(s string, line int) (instruction, error) {
	s = strings.TrimSpace(s)
	cmd, rest, _ := strings.Cut(s, " ")
	in := instruction{cmd: strings.ToUpper(cmd), flags: map[string]string{}, line: line}
	rest = strings.TrimLeft(rest, " \t")
	if in.cmd == "COPY" || in.cmd == "ADD" || in.cmd == "FROM" || in.cmd == "RUN" {
		for strings.HasPrefix(rest, "--") {
			var f string
			f, rest, _ = strings.Cut(rest, " ")
			k, v, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
			in.flags[k] = v
			rest = strings.TrimLeft(rest, " \t")
		}
	}
	in.args = rest
	return in, nil
}

// jsonOrShell returns the exec form of a RUN/CMD/ENTRYPOINT argument: a
// JSON array as it is, anything else wrapped in the stage's shell.
func jsonOrShell(args string) []string {
	if strings.HasPrefix(args, "[") {
		var v []string
		if json.Unmarshal([]byte(args), &v) == nil {
			return v
		}
	}
	return []string{"/bin/sh", "-c", args}
}

// expand substitutes $VAR, ${VAR}, ${VAR:-default} and ${VAR:+alt} from
// vars, as Docker does in FROM, COPY, ENV, ARG, WORKDIR and USER; \$ is a
// literal dollar. (RUN is left to the shell, as in Docker.)
func expand(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && s[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		if s[i+1] == '{' {
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				b.WriteString(s[i:])
				break
			}
			body := s[i+2 : i+end]
			i += end
			name, op, word := body, "", ""
			if j := strings.Index(body, ":-"); j >= 0 {
				name, op, word = body[:j], ":-", body[j+2:]
			} else if j := strings.Index(body, ":+"); j >= 0 {
				name, op, word = body[:j], ":+", body[j+2:]
			}
			v, ok := vars[name]
			switch op {
			case ":-":
				if !ok || v == "" {
					v = expand(word, vars)
				}
			case ":+":
				if ok && v != "" {
					v = expand(word, vars)
				} else {
					v = ""
				}
			}
			b.WriteString(v)
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j == i+1 {
			b.WriteByte(c)
			continue
		}
		b.WriteString(vars[s[i+1:j]])
		i = j - 1
	}
	return b.String()
}

// words splits a line on blanks, keeping double- or single-quoted parts
// together (quotes removed), for ENV, LABEL, ARG, COPY and EXPOSE.
func words(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote, in = c, true
		case quote != '\'' && c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case quote == 0 && (c == ' ' || c == '\t'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// keyValues parses ENV/LABEL/ARG arguments: K=V pairs, or the legacy
// "K V" form of ENV (one pair, the value the rest of the line).
func keyValues(args string, legacy bool) [][2]string {
	ws := words(args)
	if len(ws) == 0 {
		return nil
	}
	if legacy && !strings.Contains(ws[0], "=") {
		k, v, _ := strings.Cut(strings.TrimSpace(args), " ")
		return [][2]string{{k, strings.TrimSpace(v)}}
	}
	var out [][2]string
	for _, w := range ws {
		k, v, _ := strings.Cut(w, "=")
		out = append(out, [2]string{k, v})
	}
	return out
}
