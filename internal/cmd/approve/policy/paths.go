package policy

import (
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Where the paths of a shell command may lie. Every word of a command that may name a file
// (for the programs of nonFileWords, fewer), every redirected file and every file a wrapper
// writes (time -o) is resolved against the root, after .., /, // and symbolic links; ~ (every
// tilde form), /proc, /dev/fd, a descriptor the line does not open itself and a word computed
// at run time are outside. An allow rule matches only when all of them lie inside the root (or
// in the places of its paths: list, or anywhere with paths: anywhere); a deny or ask rule with
// paths: matches only the commands with one that does not.

// pathsInside reports whether every path of p lies where sm lets it (see above); allow says
// whether sm is an allow rule's, which also refuses writes that run code later
// (writeRunsLater) or hold a control character. The words of the programs of nonFileWords, and
// grep's pattern, name no file and are not judged.
//
// named are the words (bits, the first 64) an allow rule's pattern spells out literally: the
// rule names them, so they are not judged (go test ./..., cat /etc/motd).
func (d *Decider) pathsInside(p *Part, sm *ShellMatcher, allow bool, named uint64) (bool, string) {
	plain := allow && len(sm.Protect) == 0 && len(sm.Places) == 0 && !sm.NotRoot
	if plain && p.pathsDone && p.pathsNamed == named {
		return p.pathsOK, p.pathsWhy
	}
	ok, why := d.judgePaths(p, sm, allow, named)
	if plain {
		p.pathsDone, p.pathsOK, p.pathsWhy, p.pathsNamed = true, ok, why, named
	}
	return ok, why
}

// literalPrefix are the words (bits) of an argv c matches that c's words before its first **
// match with a literal: those words are exactly what the pattern spells.
func (c *CmdPattern) literalPrefix() uint64 {
	var m uint64
	for i, pw := range c.Words {
		if pw == nil || i >= 64 {
			break
		}
		if pw.literal && !pw.IsRegex {
			m |= 1 << i
		}
	}
	return m
}

func (d *Decider) judgePaths(p *Part, sm *ShellMatcher, allow bool, named uint64) (bool, string) {
	from := 1
	skip := -1 // a word the program reads as no file (grep's pattern)
	if len(p.Words) > 0 && !p.dyn(0) {
		if nonFileWords[p.Base] && p.Name == p.Base {
			from = len(p.Words)
		}
		skip = patternOperand(p)
	}
	for i := from; i < len(p.Words); i++ {
		if i == skip || i < 64 && named&(1<<i) != 0 {
			continue
		}
		if ok, why := d.judgeWord(p, i, sm, allow); !ok {
			return false, why
		}
	}
	if ok, why := d.judgeRedirects(p, sm, allow); !ok {
		return false, why
	}
	if allow {
		return judgeRiskyWrites(p)
	}
	return true, ""
}

// judgeWord judges every path word i of p may name.
func (d *Decider) judgeWord(p *Part, i int, sm *ShellMatcher, allow bool) (bool, string) {
	if p.dyn(i) {
		return false, "has a word computed at run time, which may name any file"
	}
	w := p.Words[i]
	cs, n := pathCandidates(w)
	for _, c := range cs[:n] {
		if ok, why := d.placeOK(c, p.Chdir, sm, allow, false); !ok {
			return false, why
		}
	}
	if len(w) > 1 && w[0] == '-' {
		// a value glued to the letter of a cluster that takes it (-wS/etc/shadow names
		// /etc/shadow), as the program reads it: the table of options says where it starts
	glued:
		for _, c := range p.PathCandidates(i) {
			for _, seen := range cs[:n] {
				if c == seen {
					continue glued
				}
			}
			if ok, why := d.placeOK(c, p.Chdir, sm, allow, false); !ok {
				return false, why
			}
		}
	}
	if glued := gluedFrom(p, w); glued > 2 {
		// -isystem/etc: a program the table does not know may take a value glued to an
		// option of any length, so every place a value may begin is judged
		for k := 3; k <= glued; k++ {
			if ok, why := d.placeOK(w[k:], p.Chdir, sm, allow, false); !ok {
				return false, why
			}
		}
	}
	return true, ""
}

// judgeRedirects judges the files p's redirections read and write.
func (d *Decider) judgeRedirects(p *Part, sm *ShellMatcher, allow bool) (bool, string) {
	for _, pw := range p.Inputs {
		if pw.dyn {
			return false, "redirects a file named at run time"
		}
		if ok, why := d.placeOK(pw.s, p.Chdir, sm, allow, false); !ok {
			return false, why
		}
	}
	for _, pw := range p.Outputs {
		if pw.dyn {
			return false, "redirects a file named at run time"
		}
		if ok, why := d.placeOK(pw.s, p.Chdir, sm, allow, true); !ok {
			return false, why
		}
	}
	return true, ""
}

// judgeRiskyWrites judges, for an allow rule, the values of the options that write (go build
// -o, sort -o, uniq's second operand): none may make code run later.
func judgeRiskyWrites(p *Part) (bool, string) {
	for _, u := range p.riskyUses() {
		if u.kind != riskWrites {
			continue
		}
		for i := u.at; i <= u.at+1 && i < len(p.Words); i++ {
			cs, n := pathCandidates(p.Words[i])
			for _, c := range append(cs[:n:n], p.PathCandidates(i)...) {
				if why := writeRunsLater(c); why != "" {
					return false, "writes " + c + ", " + why
				}
			}
			if u.opt == nil || strings.Contains(p.Words[u.at], "=") {
				break
			}
		}
	}
	return true, ""
}

// gluedFrom is, for an option word -xVALUE of a program the table of options does not know,
// the last place its value may begin: the first / or ~ (0 when the word has neither, or is no
// such option). Where the table knows the program, its own reading decides (riskyUses).
func gluedFrom(p *Part, w string) int {
	if len(w) < 3 || w[0] != '-' || w[1] == '-' {
		return 0
	}
	k := strings.IndexAny(w, "/~")
	if k < 0 {
		return 0
	}
	if s, _ := specFor(p); s != nil {
		return 0
	}
	return k
}

// nonFileWords are programs that open no file their words name (echo prints them): an allow
// rule does not judge their words (their redirections still are).
var nonFileWords = map[string]bool{"echo": true, "printf": true, "true": true, "false": true, ":": true}

// patternOperand is the index of the word grep, egrep, fgrep or rg reads as its pattern (no
// file), or -1: when an option may have given the pattern (-e, -f, --regexp, --file, or any
// option fr-approve cannot tell apart from them), or a word before it is computed at run
// time, every word is judged.
func patternOperand(p *Part) int {
	var values string // short options whose value is the rest of the word or the next word
	switch p.Base {
	case "grep", "egrep", "fgrep":
		values = "efmABCdD"
	case "rg":
		values = "ABCEefgjMmrTtd"
	default:
		return -1
	}
	if p.Name != p.Base {
		return -1
	}
	for i := 1; i < len(p.Words); i++ {
		if p.dyn(i) {
			return -1
		}
		w := p.Words[i]
		switch {
		case w == "--":
			if i+1 < len(p.Words) && !p.dyn(i+1) {
				return i + 1
			}
			return -1
		case w == "-" || !strings.HasPrefix(w, "-"):
			return i
		case strings.HasPrefix(w, "--"):
			name, _, eq := strings.Cut(w[2:], "=")
			if name == "" || strings.HasPrefix("regexp", name) || strings.HasPrefix("file", name) {
				return -1
			}
			if !eq {
				return -1 // it may take the next word as its value
			}
		default:
			for j := 1; j < len(w); j++ {
				c := w[j]
				if c == 'e' || c == 'f' {
					return -1
				}
				if strings.IndexByte(values, c) >= 0 {
					if j == len(w)-1 {
						i++ // the next word is its value
					}
					break
				}
			}
		}
	}
	return -1
}

// placeOK judges one path s: inside the root (and none of sm.Protect), or in one of
// sm.Places. write: it is written (a redirection's target), which an allow rule never lets
// hold a control character or make code run later.
func (d *Decider) placeOK(s string, chdir bool, sm *ShellMatcher, allow, write bool) (bool, string) {
	if done, ok, why := placeByText(s, chdir, allow, write); done {
		return ok, why
	}
	if fastPaths && !filepath.IsAbs(s) && !sm.NotRoot && d.linkFree(s) {
		// the usual word: relative, no .., no symbolic link on the way (one Lstat a name)
		rel := filepath.Clean(s)
		if ok, why := placeProtected(s, sm, rel); !ok {
			return false, why
		}
		if write && allow {
			return placeWritable(s, rel)
		}
		return true, ""
	}
	return d.placeResolved(s, sm, allow, write)
}

// placeByText judges what the text of the path s decides alone; done is false when where it
// leads decides.
func placeByText(s string, chdir, allow, write bool) (done, ok bool, why string) {
	switch {
	case s == "" || s == "/dev/null":
		return true, true, ""
	case len(s) >= 4096:
		return true, false, "names a path longer than a path can be"
	case write && (s == "/dev/stdout" || s == "/dev/stderr"):
		return true, true, "" // the command's own output, where it writes anyway
	case write && allow && hasControl(s):
		return true, false, "writes a path holding a control character"
	case strings.HasPrefix(s, "~"):
		return true, false, "names " + s + ", in a home directory"
	case chdir && !filepath.IsAbs(s):
		return true, false, "names " + s + " relative to a directory that is not known (after cd, env -C or find -execdir)"
	}
	return false, false, ""
}

// placeResolved judges the path s by where it leads, lexically and with its symbolic links
// resolved: inside the root (unless sm.NotRoot) or in one of sm.Places.
func (d *Decider) placeResolved(s string, sm *ShellMatcher, allow, write bool) (bool, string) {
	abs := filepath.IsAbs(s)
	raw := s
	if !abs {
		raw = d.root + "/" + s
	}
	clean := filepath.Clean(raw)
	lexRel, lexIn := withinOrSelf(d.root, clean)
	if !lexIn && (!abs || len(sm.Places) == 0) {
		return false, "names " + s + ", outside the root " + d.root
	}
	real := d.resolve(raw)
	realRel, realIn := withinOrSelf(d.rootReal, real)
	if lexIn && !realIn && len(sm.Places) == 0 {
		return false, "names " + s + ", which resolves to " + real + ", outside the root"
	}
	in := lexIn && realIn && !sm.NotRoot
	if !in && !inPlaces(sm.Places, clean, real, lexRel, lexIn, realRel, realIn) {
		return false, d.notPlaced(s, real, lexIn, realIn)
	}
	if lexIn || realIn {
		if ok, why := placeProtected(s, sm, lexRel, realRel); !ok {
			return false, why
		}
	}
	if write && allow {
		return placeWritable(s, lexRel, realRel, clean, real)
	}
	return true, ""
}

// notPlaced says why the path s (resolving to real) is in no place a rule allows.
func (d *Decider) notPlaced(s, real string, lexIn, realIn bool) string {
	switch {
	case lexIn && !realIn:
		return "names " + s + ", which resolves to " + real + ", outside the root"
	case lexIn && realIn:
		return "names " + s + ", in none of the places the rule lists"
	}
	return "names " + s + ", outside the root " + d.root
}

// placeProtected judges the forms of the path s: none may match a protected path of sm.
func placeProtected(s string, sm *ShellMatcher, forms ...string) (bool, string) {
	if len(sm.Protect) == 0 {
		return true, ""
	}
	for _, rel := range forms {
		if g := protectedBy(sm, rel); g != "" {
			return false, "names " + s + ", which matches the protected path " + g
		}
	}
	return true, ""
}

// placeWritable judges the forms of the path s an allow rule lets a command write: none may
// make code run later.
func placeWritable(s string, forms ...string) (bool, string) {
	for _, f := range forms {
		if why := writeRunsLater(f); why != "" {
			return false, "writes " + s + ", " + why
		}
	}
	return true, ""
}

// fastPaths is false in the test that compares placeOK with and without linkFree.
var fastPaths = true

// linkFree reports whether the relative path s stays inside the root without a symbolic link
// on the way: no .. among its names, and each name, looked at below the root, is no link
// (looking stops at the first that does not exist). false means the slow path decides.
func (d *Decider) linkFree(s string) bool {
	// a word judged by several rules of one prompt is looked at once
	d.freshMemos()
	for _, m := range d.linkMemo {
		if m.s == s {
			return m.free
		}
	}
	free := d.lookLinkFree(s)
	if len(d.linkMemo) < 32 {
		d.linkMemo = append(d.linkMemo, linkMemo{s, free})
	}
	return free
}

type linkMemo struct {
	s    string
	free bool
}

func (d *Decider) lookLinkFree(s string) bool {
	if s == "" || s[0] == '/' || d.rootReal == "" || s == ".." || strings.HasPrefix(s, "../") ||
		strings.Contains(s, "/../") || strings.HasSuffix(s, "/..") {
		return false
	}
	buf := append(d.pathBuf[:0], d.rootReal...)
	defer func() { d.pathBuf = buf[:0] }()
	for rest := s; rest != ""; {
		name, after, _ := strings.Cut(rest, "/")
		rest = after
		if name == "" || name == "." {
			continue
		}
		if buf[len(buf)-1] != '/' {
			buf = append(buf, '/')
		}
		buf = append(buf, name...)
		exists, link, dir, ok := d.lstatOnce(buf)
		switch {
		case !ok || link:
			return false
		case !exists:
			return true // nothing below a name that does not exist
		case !dir:
			return true // nothing is reached below a file
		}
	}
	return true
}

// freshMemos forgets what linkFree and lstatOnce found for an earlier prompt.
func (d *Decider) freshMemos() {
	if d.memoGen != d.gen {
		d.memoGen, d.linkMemo, d.nameMemo = d.gen, d.linkMemo[:0], d.nameMemo[:0]
	}
}

// nameMemo is what lstatName said of one name below the root during the prompt being decided.
type nameMemo struct {
	p                       string
	exists, link, dir, okay bool
}

// fastNames is false in the test that compares linkFree with and without nameMemo.
var fastNames = true

// lstatOnce is lstatName(p), looked at once per prompt: the words of one command often share
// their first names (src/a.go src/b.go). Nothing is kept from one prompt to the next, so a
// link made between two prompts is seen.
func (d *Decider) lstatOnce(p []byte) (exists, link, dir, ok bool) {
	d.freshMemos()
	if fastNames {
		for i := range d.nameMemo {
			if m := &d.nameMemo[i]; m.p == string(p) {
				return m.exists, m.link, m.dir, m.okay
			}
		}
	}
	s := string(p)
	exists, link, dir, ok = lstatName(s)
	if fastNames && len(d.nameMemo) < 32 {
		d.nameMemo = append(d.nameMemo, nameMemo{s, exists, link, dir, ok})
	}
	return exists, link, dir, ok
}

// inPlaces reports whether a path lies in one of the places of a paths: list, both as written
// (made absolute and cleaned) and after resolving symbolic links: /absolute globs match the
// absolute forms, relative ones the forms relative to the root.
func inPlaces(places []string, clean, real, lexRel string, lexIn bool, realRel string, realIn bool) bool {
	for _, g := range places {
		if strings.HasPrefix(g, "/") {
			if doublestar.MatchUnvalidated(g, clean) && doublestar.MatchUnvalidated(g, real) {
				return true
			}
			continue
		}
		if lexIn && realIn && doublestar.MatchUnvalidated(g, lexRel) && doublestar.MatchUnvalidated(g, realRel) {
			return true
		}
	}
	return false
}

// protectedBy is the glob of sm.Protect that rel (a path relative to the root) or a folded
// form of it matches ("" for none): as its name is written, as a directory (rel/), and folded
// as a file system that ignores case, and trailing dots and spaces, would see it.
func protectedBy(sm *ShellMatcher, rel string) string {
	folded := foldPath(rel)
	for i, g := range sm.Protect {
		if doublestar.MatchUnvalidated(g, rel) || doublestar.MatchUnvalidated(g, rel+"/") {
			return g
		}
		fg := sm.protectFold[i]
		if doublestar.MatchUnvalidated(fg, folded) || doublestar.MatchUnvalidated(fg, folded+"/") {
			return g
		}
	}
	return ""
}

// foldPath is a path as a file system that folds case and drops trailing dots and spaces of
// each name (macOS, Windows) sees it: Vendor./x and .GitHub /y are vendor/x and .github/y.
// Globs are folded the same way (foldGlob), so deny and ask rules match more, never less.
func foldPath(p string) string {
	if !needsFold(p) {
		return p
	}
	parts := strings.Split(strings.ToLower(p), "/")
	for i, e := range parts {
		if e == "." || e == ".." {
			continue
		}
		t := strings.TrimRight(e, ". ")
		if t == "" && e != "" {
			t = e // a name of dots alone is not shortened to nothing
		}
		parts[i] = t
	}
	return strings.Join(parts, "/")
}

// needsFold reports whether foldPath may change p.
func needsFold(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'A' <= c && c <= 'Z' || c >= utf8.RuneSelf {
			return true
		}
		if (c == '.' || c == ' ') && (i+1 == len(p) || p[i+1] == '/') {
			return true
		}
	}
	return false
}

// foldGlob folds a glob as foldPath folds a path.
func foldGlob(g string) string { return foldPath(g) }

func foldGlobs(gs []string) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = foldGlob(g)
	}
	return out
}

// hasControl reports whether s holds a control character (C0, DEL, C1) or is not UTF-8.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			return true
		}
	}
	return false
}

// writeRunsLater says why writing the path p makes code run later ("" when it does not): a
// name .git at any depth (hooks and config run programs, and a .git file points git at a
// repository elsewhere) or .envrc (direnv runs it on entering the directory), compared as a
// file system that folds case and trailing dots and spaces would.
func writeRunsLater(p string) string {
	if hasControl(p) {
		return "a path holding a control character"
	}
	for _, e := range strings.Split(foldPath(filepath.ToSlash(p)), "/") {
		switch e {
		case ".git":
			return "into .git, whose hooks and configuration run programs"
		case ".envrc":
			return "an .envrc, which direnv runs"
		}
	}
	return ""
}

// pathCandidates lists what a word may name as a file: the word itself, the value of
// --opt=VALUE, what follows a short option (-fFILE, and -f=FILE), the value of NAME=VALUE
// (dd if=FILE), what follows @ (@FILE: more arguments read from FILE), and a home when a ~
// follows a colon (bash expands a=b:~/x in words that look like assignments).
func pathCandidates(w string) (c [4]string, n int) {
	switch {
	case w == "" || w == "-" || w == "--":
	case strings.HasPrefix(w, "--"):
		if _, v, ok := strings.Cut(w, "="); ok {
			c[0], n = v, 1
		}
	case strings.HasPrefix(w, "-"):
		c[0], n = w[2:], 1
		if _, v, ok := strings.Cut(w, "="); ok {
			c[1], n = v, 2
		}
	default:
		c[0], n = w, 1
		if _, v, ok := strings.Cut(w, "="); ok {
			c[n], n = v, n+1
		}
		if w[0] == '@' {
			c[n], n = w[1:], n+1
		}
		if strings.Contains(w, ":~") {
			c[n], n = "~", n+1
		}
	}
	return c, n
}

// writeNever says why no allow rule may allow a file_write to path p, whose forms relative to
// the root are rels ("" when nothing stops it): a control character, a name fuseraft may
// expand (~), or a write that runs code later (writeRunsLater).
func writeNever(p string, rels []string) string {
	if hasControl(p) {
		return "holds a control character"
	}
	if strings.HasPrefix(p, "~") {
		return p + " begins with ~, which may name a home directory"
	}
	for _, r := range rels {
		if why := writeRunsLater(r); why != "" {
			return "writes " + p + ", " + why
		}
	}
	return ""
}

// matchFolded reports whether a form of f, folded, matches one of the folded globs: how a
// deny or ask rule's globs match on a file system that folds case and trailing dots.
func matchFolded(globs []string, f *fileFacts) bool {
	for _, g := range globs {
		abs := strings.HasPrefix(g, "/")
		forms := f.any
		if abs {
			forms = f.abs
		}
		for _, x := range forms {
			if doublestar.MatchUnvalidated(g, foldPath(x)) {
				return true
			}
		}
	}
	return false
}
