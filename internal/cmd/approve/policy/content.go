package policy

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/pkg/wire"
)

// A file_write's contents are most of its bytes, and most rules never read them whole: a
// max_size needs the length of the new content, a `when` its length in characters or whether
// it holds a regex's literal prefix. Those are read from the JSON string itself; the content
// is decoded only for what needs the text (changed lines, a regex run, jq, the person asked).

// rawStringSize returns the length in bytes and in characters of the quoted JSON string q as
// jsonscan.Unquote decodes it, without decoding it; ok=false when Unquote would fail or
// replace bytes that are not UTF-8 (the caller then decodes).
func rawStringSize(q []byte) (size, chars int, ok bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return 0, 0, false
	}
	s := q[1 : len(q)-1]
	for r := 0; r < len(s); {
		j := bytes.IndexByte(s[r:], '\\')
		if j < 0 {
			j = len(s) - r
		}
		run := s[r : r+j]
		if !utf8.Valid(run) {
			return 0, 0, false
		}
		size += len(run)
		chars += utf8.RuneCount(run)
		r += j
		if r >= len(s) {
			break
		}
		if r+1 >= len(s) {
			return 0, 0, false
		}
		switch e := s[r+1]; e {
		case '"', '\\', '/', '\'', 'b', 'f', 'n', 'r', 't':
			size++
			chars++
			r += 2
		case 'u':
			rr := jsonscan.HexEscape(s[r:])
			if rr < 0 {
				return 0, 0, false
			}
			r += 6
			if utf16.IsSurrogate(rr) {
				rr1 := jsonscan.HexEscape(s[r:])
				if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
					r += 6
					rr = dec
				} else {
					rr = utf8.RuneError
				}
			}
			size += utf8.RuneLen(rr)
			chars++
		default:
			return 0, 0, false
		}
	}
	return size, chars, true
}

// rawLacks reports whether the quoted JSON string q surely decodes to a string without sub,
// which holds no character a short escape stands for (fastCond.rawPrefix): q has neither sub
// nor a \u escape. noEscapeU says the event q is part of has no backslash followed by u.
func rawLacks(q []byte, sub string, noEscapeU bool) bool {
	return (noEscapeU || !bytes.Contains(q, []byte(`\u`))) && !bytes.Contains(q, []byte(sub))
}

// newContent returns the file_write's new content, decoding it the first time it is needed.
func (d *Decider) newContent(req *wire.ApprovalRequest) string {
	if ev := d.ev; ev != nil && ev.req == req && ev.pend&newPending != 0 {
		req.NewContent, _ = jsonscan.Unquote(d.fl.v[fNewContent])
		ev.pend &^= newPending
	}
	return req.NewContent
}

// newSize returns the length in bytes and in characters of the file_write's new content.
func (d *Decider) newSize(req *wire.ApprovalRequest) (size, chars int) {
	if ev := d.ev; ev != nil && ev.req == req && ev.pend&newPending != 0 {
		if !ev.sized {
			ev.newBytes, ev.newChars, ev.sized = rawStringSize(d.fl.v[fNewContent])
		}
		if ev.sized {
			return ev.newBytes, ev.newChars
		}
	}
	s := d.newContent(req)
	return len(s), utf8.RuneCountInString(s)
}

// newOver reports whether the file_write's new content is longer than max bytes. A JSON
// string is no shorter than what it decodes to: most contents need no count.
func (d *Decider) newOver(req *wire.ApprovalRequest, max int64) bool {
	if ev := d.ev; ev != nil && ev.req == req && ev.pend&newPending != 0 && int64(len(d.fl.v[fNewContent])-2) <= max {
		return false
	}
	size, _ := d.newSize(req)
	return int64(size) > max
}

// fastPending runs condition f on the new content of a file_write that is not decoded yet,
// when the JSON string is enough to say; ok=false otherwise.
func (d *Decider) fastPending(ev *event, f *fastCond) (res, ok bool) {
	if f.key != "newContent" || ev.pend&newPending == 0 || d.ev != ev {
		return false, false
	}
	if f.test {
		if f.rawPrefix && rawLacks(d.fl.v[fNewContent], f.prefix, d.fl.noEscapeU) {
			return false, true
		}
		return false, false
	}
	// the JSON string of n bytes holds between n/12 (\uXXXX\uXXXX for one character) and n
	if n := len(d.fl.v[fNewContent]) - 2; n >= 0 {
		if res, ok := f.lengthWithin((n+11)/12, n); ok {
			return res, true
		}
	}
	_, chars := d.newSize(ev.req)
	return f.length(chars)
}
