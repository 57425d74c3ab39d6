package jsonscan

import "encoding/binary"

// Stream is Scan for a line read in pieces: Write each piece in turn, then End. It holds
// nothing of the line but its open containers and its top-level "type" value, so a line too
// large to hold can be classified (and validated) as it goes by. The result agrees with Scan
// on the whole line however it is cut (see FuzzStream).
type Stream struct {
	stack  []byte // the open containers, '{' or '['
	state  uint8
	bad    bool
	begun  bool // the top-level value has started
	done   bool // the top-level value is complete
	object bool // the top-level value is an object

	esc   int    // in a string: 1 after a backslash, 2-5 for the \u hex digits to go
	sEsc  bool   // the current string holds an escape or a byte past ASCII
	lit   string // the rest of a literal (true, false, null) to match
	role  uint8  // what the current string is: rOther, rKey (a top-level key), rType (its value)
	key   []byte // a top-level key as read so far, quoted, up to keyCap bytes
	kTyp  bool   // the top-level key just read is "type"
	isKey bool   // the current string is a key

	typed   bool
	rawType []byte
	typeEsc bool
}

const (
	sValue    uint8 = iota // a value is expected
	sValOrEnd              // after '[': a value or ']'
	sAfter                 // after a value: ',', a close or the end
	sKeyOrEnd              // after '{': a key or '}'
	sKey                   // after ',' in an object: a key
	sColon                 // after a key
	sString                // in a string
	sLit                   // in true, false or null
	sNumMinus              // after '-'
	sNumZero               // after a leading 0
	sNumInt                // in the integer digits
	sNumDot                // after '.'
	sNumFrac               // in the fraction digits
	sNumE                  // after 'e'
	sNumESign              // after the exponent's sign
	sNumExp                // in the exponent digits
)

const (
	rOther uint8 = iota
	rKey
	rType
)

const keyCap = 32 // a key longer than this, quoted and escaped, is not "type"

// Bad reports whether what was written so far cannot begin a valid JSON text.
func (s *Stream) Bad() bool { return s.bad }

// Typed reports the top-level "type" read so far: the value of the last complete "type" key
// of an object, quoted as in the line, when it is a string; escapes reports whether it holds
// escapes or bytes past ASCII (it must then be unquoted to compare). A later "type" key may
// still change it.
func (s *Stream) Typed() (raw []byte, escapes, ok bool) {
	return s.rawType, s.typeEsc, s.typed && s.object
}

// End finishes the line and returns what Scan returns for the whole of it. RawType is held by
// the Stream.
func (s *Stream) End() Shape {
	if s.bad {
		return Shape{}
	}
	if !s.done && len(s.stack) == 0 {
		switch s.state {
		case sNumZero, sNumInt, sNumFrac, sNumExp:
			s.done = true // a top-level number ends with the line
		}
	}
	if !s.done {
		return Shape{}
	}
	sh := Shape{Valid: true, Object: s.object}
	if s.object && s.typed {
		sh.Typed, sh.RawType, sh.TypeEsc = true, s.rawType, s.typeEsc
	}
	return sh
}

// Write reads the next piece of the line.
func (s *Stream) Write(b []byte) {
	for i := 0; i < len(b) && !s.bad; {
		c := b[i]
		switch s.state {
		case sString:
			if s.role == rOther || s.role == rKey && len(s.key) > keyCap {
				i = s.skipString(b, i)
				continue
			}
			s.stringByte(c)
			i++
			continue
		case sLit:
			s.litByte(c)
			i++
			continue
		case sNumMinus, sNumZero, sNumInt, sNumDot, sNumFrac, sNumE, sNumESign, sNumExp:
			if s.numberByte(c) {
				i++
			}
			continue // a byte that ends the number is read again
		}
		i++
		if !IsSpace(c) {
			s.structural(c)
		}
	}
}

// litByte reads the next byte of a literal (true, false, null).
func (s *Stream) litByte(c byte) {
	if c != s.lit[0] {
		s.bad = true
		return
	}
	s.lit = s.lit[1:]
	if s.lit == "" {
		s.endValue()
	}
}

// structural reads a byte outside strings, literals and numbers that is not space: a value's
// start, a comma, a colon, the end of an object or array. Anything else makes the line bad.
func (s *Stream) structural(c byte) {
	switch s.state {
	case sValue:
		s.value(c)
	case sValOrEnd:
		if c == ']' {
			s.close()
		} else {
			s.value(c)
		}
	case sAfter:
		s.after(c)
	case sKeyOrEnd, sKey:
		switch {
		case c == '"':
			s.state, s.esc, s.sEsc, s.role, s.isKey = sString, 0, false, rOther, true
			if len(s.stack) == 1 {
				s.role, s.key = rKey, append(s.key[:0], '"')
			}
		case c == '}' && s.state == sKeyOrEnd:
			s.close()
		default:
			s.bad = true
		}
	case sColon:
		if c != ':' {
			s.bad = true
			return
		}
		s.state = sValue
	}
}

// after reads the byte that follows a value: a comma, or the end of the object or array.
func (s *Stream) after(c byte) {
	if len(s.stack) == 0 {
		s.bad = true // something after the top-level value
		return
	}
	top := s.stack[len(s.stack)-1]
	switch {
	case c == ',' && top == '{':
		s.state = sKey
	case c == ',':
		s.state = sValue
	case c == '}' && top == '{', c == ']' && top == '[':
		s.close()
	default:
		s.bad = true
	}
}

func (s *Stream) close() {
	s.stack = s.stack[:len(s.stack)-1]
	s.endValue()
}

// endValue is called when a value is complete.
func (s *Stream) endValue() {
	s.state = sAfter
	if len(s.stack) == 0 {
		s.done = true
	}
}

// value starts the value that begins with c.
func (s *Stream) value(c byte) {
	first := !s.begun
	s.begun = true
	typeValue := s.kTyp && len(s.stack) == 1
	if typeValue {
		s.kTyp = false
		s.typed, s.rawType, s.typeEsc = false, s.rawType[:0], false
	}
	switch {
	case c == '"':
		s.state, s.esc, s.sEsc, s.role, s.isKey = sString, 0, false, rOther, false
		if typeValue {
			s.role, s.rawType = rType, append(s.rawType, '"')
		}
	case c == '{', c == '[':
		if len(s.stack) >= maxDepth {
			s.bad = true
			return
		}
		s.stack = append(s.stack, c)
		if first && c == '{' {
			s.object = true
		}
		s.state = sKeyOrEnd
		if c == '[' {
			s.state = sValOrEnd
		}
	case c == 't':
		s.state, s.lit = sLit, "rue"
	case c == 'f':
		s.state, s.lit = sLit, "alse"
	case c == 'n':
		s.state, s.lit = sLit, "ull"
	case c == '-':
		s.state = sNumMinus
	case c == '0':
		s.state = sNumZero
	case '1' <= c && c <= '9':
		s.state = sNumInt
	default:
		s.bad = true
	}
}

// skipString reads a string that nothing is kept of from b[i] on, eight bytes at a time
// where it can, and returns where it stopped: past the string's end or at the end of b.
func (s *Stream) skipString(b []byte, i int) int {
	for i < len(b) {
		if s.esc != 0 {
			s.stringByte(b[i])
			i++
			continue
		}
		for i+8 <= len(b) && stringStop(binary.LittleEndian.Uint64(b[i:])) == 0 {
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if c == '\\' && i+1 < len(b) {
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				continue
			}
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		s.stringByte(c)
		i++
		if s.state != sString || s.bad {
			break
		}
	}
	return i
}

// stringByte reads one byte of a string.
func (s *Stream) stringByte(c byte) {
	switch s.role {
	case rKey:
		if len(s.key) <= keyCap {
			s.key = append(s.key, c)
		}
	case rType:
		s.rawType = append(s.rawType, c)
	}
	switch {
	case s.esc == 1:
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.esc = 0
		case 'u':
			s.esc = 5
		default:
			s.bad = true
		}
		return
	case s.esc > 1:
		if !isHex(c) {
			s.bad = true
			return
		}
		if s.esc--; s.esc == 1 {
			s.esc = 0
		}
		return
	case c == '\\':
		s.esc, s.sEsc = 1, true
		return
	case c < 0x20:
		s.bad = true
		return
	case c >= 0x80:
		s.sEsc = true // past ASCII: compared unquoted, as Scan does
		return
	case c != '"':
		return
	}
	// The closing quote.
	if s.isKey {
		s.state = sColon
	}
	switch s.role {
	case rKey:
		s.kTyp = false
		if len(s.key) <= keyCap {
			if !s.sEsc {
				s.kTyp = string(s.key) == `"type"`
			} else {
				k, ok := Unquote(s.key)
				s.kTyp = ok && k == "type"
			}
		}
	case rType:
		s.typed, s.typeEsc = true, s.sEsc
	}
	if !s.isKey {
		s.endValue()
	}
}

// numberByte reads one byte of a number; it returns false when c is not part of it (the
// number has ended, and c is read again) and marks the stream bad when the number is not
// valid.
func (s *Stream) numberByte(c byte) bool {
	digit := '0' <= c && c <= '9'
	switch s.state {
	case sNumMinus:
		switch {
		case c == '0':
			s.state = sNumZero
		case digit:
			s.state = sNumInt
		default:
			s.bad = true
		}
		return true
	case sNumZero, sNumInt, sNumFrac:
		// A leading 0 takes no more digits, and a fraction no second '.'.
		switch {
		case digit && s.state != sNumZero:
		case c == '.' && s.state != sNumFrac:
			s.state = sNumDot
		case c == 'e' || c == 'E':
			s.state = sNumE
		default:
			s.endValue()
			return false
		}
		return true
	case sNumDot:
		if !digit {
			s.bad = true
		}
		s.state = sNumFrac
		return true
	case sNumE:
		switch {
		case c == '+' || c == '-':
			s.state = sNumESign
		case digit:
			s.state = sNumExp
		default:
			s.bad = true
		}
		return true
	case sNumESign:
		if !digit {
			s.bad = true
		}
		s.state = sNumExp
		return true
	default: // sNumExp
		if digit {
			return true
		}
		s.endValue()
		return false
	}
}
