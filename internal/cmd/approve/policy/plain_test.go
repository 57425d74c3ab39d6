package policy

import (
	"math/rand"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/testkit"
)

// analyzeBothWays returns Analyze(cmd) with and without the plain-line path.
func analyzeBothWays(cmd string) (fast, slow []Part) {
	fast = Analyze(cmd)
	usePlain = false
	defer func() { usePlain = true }()
	return fast, Analyze(cmd)
}

var plainVocabulary = []string{
	"git", "status", "rm", "-rf", "/", "build/", "echo", "printf", "cat", "cd", "pushd", "popd", "dir",
	"read", "-a", "x", "unset", "PATH", "-v", "getopts", "mapfile", "sudo", "-u", "root", "env", "-i",
	"-C", "X=1", "PATH=.", "LD_PRELOAD=x", "GOOS=linux", "a+=b", "=", "a=", "xargs", "-0", "-I", "%",
	"bash", "sh", "-c", "-s", "--", "-", "+x", "timeout", "5", "nice", "-n", "nohup", "find", ".", "-exec",
	"-execdir", "-delete", "-name", "source", "eval", "trap", "INT", "alias", "command", "builtin", "exec",
	"watch", "time", "for", "in", "do", "done", "if", "then", "fi", "while", "until", "case", "esac",
	"select", "function", "coproc", "declare", "local", "export", "readonly", "typeset", "nameref", "let",
	"test", "tool1", "sub2", "--flag=a", "--output=/etc/passwd", "-ofile", "../x", "/tmp/y", "~/z",
	"a,b", "a:b", "user@host", "%1", "1", "2", "go", "./...", "make", "npm", "python3", "-m", "git@h:x",
	"/bin/rm", "/usr/bin/env", "./rm", "..", "srun", "ssh", "host", "-o", "ProxyCommand=x", "perl", "-e",
	"awk", "tar", "--to-command=sh", "zip", "-T", "-TT=x", "less", "vim", "-ee", "wait", "a[1]", "a[x]",
}

var plainSeparators = []string{" ", " ", " ", "  ", " | ", "|", " || ", "||", " && ", "&&", "; ", ";", " ;",
	" & ", " |& ", " ;; ", "\t", " (", ") ", " $x ", " '", "' ", " \"", " > f ", " 2>&1 ", "\n", " #c ", "*", "{a,b}"}

// TestPlainSourceMatchesParser: the parts of a plain line read directly are those the parser
// gives, for many lines of words and operators; lines that are not plain are left to it.
func TestPlainSourceMatchesParser(t *testing.T) {
	testkit.WithoutRace(t)
	r := rand.New(rand.NewSource(1))
	plain, n := 0, 20000
	if testing.Short() {
		n = 3000
	}
	check := func(cmd string) {
		t.Helper()
		fast, slow := analyzeBothWays(cmd)
		if plainLine(cmd) {
			plain++
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: read directly\n%+v\nparsed\n%+v", cmd, fast, slow)
		}
	}
	for _, cmd := range []string{"a", " a ", "a b | c d", "a|b|c|d", "a && b || c; d", "a;", "a; b;", ";a", "a |", "|| a",
		"echo rm | sh", "printf x | bash -s", "echo a b | . /dev/stdin", "cat | sh", "echo x | cat | sh",
		"cd d && rm x", "X=1 rm", "sudo -u root rm -rf /", "env PATH=. git status", "time rm x", "for", "a for b",
		"read PATH", "printf -v PATH x", "unset LD_PRELOAD", "find . -exec rm", "xargs rm", "bash -c rm",
		"a && && b", "a & b", "a &", "a |& b", "a ;; b", "", " ", "echo  a   b"} {
		check(cmd)
	}
	for i := 0; i < n; i++ {
		var b strings.Builder
		k := r.Intn(8) + 1
		if i%100 == 0 {
			k = r.Intn(501) // long lines too (TestPlainSourceLongCommands makes plain ones)
		}
		for ; k > 0; k-- {
			b.WriteString(plainVocabulary[r.Intn(len(plainVocabulary))])
			if k > 1 || r.Intn(8) == 0 {
				if r.Intn(3) == 0 {
					b.WriteString(plainSeparators[r.Intn(len(plainSeparators))])
				} else {
					b.WriteByte(' ')
				}
			}
		}
		cmd := b.String()
		check(cmd)
		// and as the command string of a wrapper, in a context of its own
		check("bash -c '" + cmd + "'")
		check("sudo " + cmd)
	}
	if plain < n/4 {
		t.Fatalf("only %d of %d lines were plain: the test does not exercise the direct way", plain, n)
	}
}

// FuzzPlainSource: whatever the line, reading it directly (when it is plain) gives the parts
// the parser gives.
func FuzzPlainSource(f *testing.F) {
	for _, s := range []string{"git status", "a | b && c || d; e", "echo rm | sh", "X=1 y", "for x", "a |& b",
		"ls" + strings.Repeat(" f", 65), "gofmt -l" + strings.Repeat(" a.go", 80) + " | wc -l"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		fast, slow := analyzeBothWays(cmd)
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: read directly\n%+v\nparsed\n%+v", cmd, fast, slow)
		}
	})
}

// TestLitSetMatchesRegexp: a regex of literal words found with strings.Contains matches
// exactly the strings the regex engine matches.
func TestLitSetMatchesRegexp(t *testing.T) {
	res := []string{"sudo|doas", "(?i)password", "(?i)sudo|doas", "password", "a", "(?i)k", "(?i)s", "é|日本",
		"(?i)PassWord|pass", "curl.*sh", "(?i)é", "a|b", "abc|abd", "x\ufffd", "", "(?s)key", "(?i)(?s)key"}
	values := []string{"", "sudo", "SUDO rm", "xdoasx", "sud", "password", "PASSWORD", "pAsSwOrD", "paſſword",
		"\u212aey", "key", "KEY", "ſ", "s", "é", "É", "日本語", "a\xffb", "\xff", "x\xff", "x\ufffd", "abd", "curl | sh",
		"a b", strings.Repeat("x", 200) + "Sudo"}
	lits := 0
	for _, src := range res {
		re := regexp.MustCompile(src)
		l := compileLits(src)
		if l == nil {
			continue
		}
		lits++
		for _, v := range values {
			got, ok := l.match(v)
			if ok && got != re.MatchString(v) {
				t.Errorf("%q on %q: %v, the regex engine says %v", src, v, got, !got)
			}
			if !ok && (!l.fold || isASCII(v)) {
				t.Errorf("%q on %q: left to the engine", src, v)
			}
		}
	}
	if lits < 8 {
		t.Errorf("only %d of the regexes are literal words", lits)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
