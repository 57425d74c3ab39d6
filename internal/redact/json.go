package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fuseraft/fr/internal/jsonscan"
)

// JSON redacts every string of a JSON text, keys and values, decoded first (so a secret
// written with escapes, "gh\u0070_...", is found too), and keeps every other byte as it was:
// the order of keys, the spacing, the escapes of strings with nothing to hide. A string that
// does not decode is redacted as the text it is.
func (r *Redactor) JSON(b []byte) []byte {
	if r == nil {
		return b
	}
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end := i + 1
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(b) {
			break // an unterminated string: redacted as text below
		}
		q := b[i : end+1]
		s, ok := jsonscan.Unquote(q)
		if !ok {
			s = string(q[1 : len(q)-1])
		}
		if red := r.String(s); red != s {
			out = append(out, b[last:i]...)
			out = appendString(out, red)
			last = end + 1
		}
		i = end
	}
	if last < len(b) {
		rest := b[last:]
		if i := bytes.IndexByte(rest, '"'); i >= 0 && bytes.Count(rest[i:], []byte{'"'})%2 == 1 {
			// what follows an unterminated quote is not JSON we can walk: treat it as text
			rest = append(append([]byte{}, rest[:i]...), r.String(string(rest[i:]))...)
		}
		if out == nil {
			return append([]byte{}, rest...)
		}
		out = append(out, rest...)
	}
	if out == nil {
		return b
	}
	return out
}

func appendString(out []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return append(out, bytes.TrimRight(buf.Bytes(), "\n")...)
}

// LineWriter redacts what is written to it line by line before passing it on: a line that
// starts as JSON (after spaces, a {, [ or ") with JSON, any other line as text. Complete
// lines go through at once; Close writes a last line without a line end.
type LineWriter struct {
	w   io.Writer
	r   *Redactor
	buf []byte
}

// NewLineWriter returns a LineWriter over w.
func NewLineWriter(w io.Writer, r *Redactor) *LineWriter { return &LineWriter{w: w, r: r} }

func (l *LineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	i := bytes.LastIndexByte(l.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	out := l.lines(l.buf[:i+1])
	l.buf = append(l.buf[:0], l.buf[i+1:]...)
	if _, err := l.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes what is left, redacted.
func (l *LineWriter) Close() error {
	if len(l.buf) == 0 {
		return nil
	}
	out := l.line(l.buf)
	l.buf = nil
	_, err := l.w.Write(out)
	return err
}

func (l *LineWriter) lines(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		out = append(out, l.line(b[:i])...)
		out = append(out, '\n')
		b = b[i+1:]
	}
	return out
}

func (l *LineWriter) line(b []byte) []byte {
	t := bytes.TrimLeft(b, " \t\r")
	if len(t) > 0 && (t[0] == '{' || t[0] == '[' || t[0] == '"') {
		return l.r.JSON(b)
	}
	return []byte(l.r.String(string(b)))
}

// Configure builds the Redactor that flags such as --redact-env NAME and --redact-pattern
// REGEX ask for: the built-in token shapes, the values of the environment variables named
// (one unset or empty is reported through warn, as there is nothing to hide), the values of
// the variables of SecretEnv (unless unset or empty), and the patterns. A value named with
// --redact-env shorter than MinValue is an error: hiding it would hide common words; one of
// SecretEnv that short is left alone, with a warning.
func Configure(envNames, patterns []string, getenv func(string) string, warn func(format string, args ...any)) (*Redactor, error) {
	opts := Options{Patterns: patterns}
	named := map[string]bool{}
	for _, name := range envNames {
		named[name] = true
		v := getenv(name)
		switch {
		case v == "":
			warn("--redact-env %s: the variable is unset or empty, nothing to redact", name)
		case len(v) < MinValue:
			return nil, fmt.Errorf("--redact-env %s: its value is shorter than %d bytes, too short to redact safely (use --redact-pattern for a pattern that matches it where it appears)", name, MinValue)
		default:
			opts.Values = append(opts.Values, v)
			// fr reads a token without the spaces and line end around it
			if t := strings.TrimSpace(v); t != v && len(t) >= MinValue {
				opts.Values = append(opts.Values, t)
			}
		}
	}
	for _, name := range SecretEnv {
		if named[name] {
			continue
		}
		v := strings.TrimSpace(getenv(name)) // as fr's commands read it
		switch {
		case v == "":
		case len(v) < MinValue:
			warn("$%s is shorter than %d bytes: its value is not redacted (it would mask ordinary text)", name, MinValue)
		default:
			opts.Values = append(opts.Values, v)
		}
	}
	return New(opts)
}
