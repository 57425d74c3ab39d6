package policy

import "strings"

// The commands of most prompts are a few plain words joined by pipes and lists
// (`go test ./... | tail -5 && git status`). plainSource analyses such a line without the
// shell parser: its simple commands, their words and texts are read directly, and each is
// judged by the same code as a parsed one (analyzer.command), so the parts are exactly those
// of the parsed line (TestPlainSourceMatchesParser). Anything else goes to the parser.

// usePlain is false in tests that compare the two ways.
var usePlain = true

// plainByte reports whether b may be in a word of a plain line: bytes no shell gives a
// meaning to in an unquoted word that is not a command's first.
func plainByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	switch b {
	case '_', '.', '/', '-', '+', ',', ':', '@', '%', '=':
		return true
	}
	return false
}

// plainReserved are the first words the parser reads as something other than a simple
// command (reserved words, declarations, let), or refuses there.
var plainReserved = map[string]bool{
	"case": true, "coproc": true, "do": true, "done": true, "elif": true, "else": true, "esac": true,
	"fi": true, "for": true, "function": true, "if": true, "in": true, "select": true, "then": true,
	"time": true, "until": true, "while": true, "declare": true, "local": true, "export": true,
	"readonly": true, "typeset": true, "nameref": true, "let": true,
}

// plainLine reports whether src is a plain line: words of plainByte separated by spaces,
// joined by |, &&, || and ;, every command having at least one word, whose first word is no
// reserved word and holds no = (an assignment).
func plainLine(src string) bool {
	n := 0 // words of the command being read
	for i := 0; i < len(src); {
		b := src[i]
		switch {
		case b == ' ':
			i++
		case plainByte(b):
			j := i
			for i < len(src) && plainByte(src[i]) {
				i++
			}
			if n == 0 && (plainReserved[src[j:i]] || strings.IndexByte(src[j:i], '=') >= 0) {
				return false
			}
			n++
		case b == '|' || b == '&' || b == ';':
			if n == 0 {
				return false
			}
			next := byte(0)
			if i+1 < len(src) {
				next = src[i+1]
			}
			switch {
			case b == '|' && next == '|', b == '&' && next == '&':
				i += 2
			case b == '|' && next == '&', b == '&':
				return false // |& and a command in the background
			default:
				i++
			}
			n = 0
		default:
			return false
		}
	}
	return n > 0
}

// plainSource adds the parts of src when it is a plain line, as source would (c is the context
// it is found in); false, having done nothing, when it is not one.
func (a *analyzer) plainSource(src string, c *cctx) bool {
	if !usePlain || !plainLine(src) {
		return false
	}
	var prev []string // the words of the command before in the pipeline
	k := 0            // the place of the command in its pipeline
	for i := 0; i < len(src); {
		for src[i] == ' ' {
			i++
		}
		// one command: words up to an operator or the end
		start, end := i, i
		ws := make([]string, 0, 8)
		for i < len(src) && src[i] != '|' && src[i] != '&' && src[i] != ';' {
			if src[i] == ' ' {
				i++
				continue
			}
			j := i
			for i < len(src) && plainByte(src[i]) {
				i++
			}
			ws = append(ws, src[j:i])
			end = i
		}
		sc := *c
		sc.text = src[start:end]
		saved := a.stdin
		a.stdin = nil
		switch {
		case k == 1:
			a.stdin = plainPipeText(prev)
		case k > 1:
			a.stdin = &stdinText{dyn: true} // what a pipeline writes is not known
		}
		w := words{s: ws}
		if len(ws) <= len(plainDyn) {
			w.dyn, w.why = plainDyn[:len(ws):len(ws)], plainWhy[:len(ws):len(ws)]
		} else {
			w.dyn, w.why = make([]bool, len(ws)), make([]string, len(ws))
		}
		a.command(&sc, w)
		a.stdin = saved
		// the operator after it
		if i < len(src) {
			if src[i] == '|' && (i+1 >= len(src) || src[i+1] != '|') {
				k++
				i++
			} else {
				k = 0
				if src[i] == ';' {
					i++
				} else {
					i += 2
				}
			}
		}
		prev = ws
	}
	return true
}

// plainDyn and plainWhy are the dyn and why of the words of a plain command: none is
// computed at run time. They are only read (a change is made on a copy: cap is len).
var (
	plainDyn [64]bool
	plainWhy [64]string
)

// plainPipeText is pipeText of a plain command of words ws.
func plainPipeText(ws []string) *stdinText {
	if ws[0] != "echo" && ws[0] != "printf" {
		return &stdinText{dyn: true}
	}
	return &stdinText{text: strings.Join(ws[1:], " ")}
}
