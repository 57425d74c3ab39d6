package policy

import (
	"sort"
	"strings"
)

// Options are an allow-list. For each program it knows, programOptions says which options are
// known to be harmless (they read, print or choose what is shown: no program run, no other
// directory, no write, no symbolic link followed out of the tree) and which of them take a
// value. Any other option, cluster letter or long name, including an abbreviation of a long
// name and a plugin's option, keeps an allow rule from matching unless a word of its pattern
// names that word or its allow_options lists the option. For a program the table does not
// know, every word that looks like an option needs naming that way. Deny and ask rules never
// look at this: an option they do not know never stops them from matching.

// riskKind is why an option keeps an allow from matching.
type riskKind uint8

const (
	riskRuns        riskKind = iota + 1 // runs another program, or code named on the command line
	riskChdir                           // runs in another directory, or reads its build from elsewhere
	riskWrites                          // writes, moves or deletes files it names
	riskFollows                         // follows symbolic links, out of the tree
	riskReads                           // reads the names of more files, or more arguments, from a file
	riskUnknown                         // an option the table does not list for the program
	riskUnknownProg                     // an option of a program whose options the table does not know
)

func (k riskKind) String() string {
	switch k {
	case riskRuns:
		return "runs other programs"
	case riskChdir:
		return "changes directory"
	case riskWrites:
		return "writes files"
	case riskFollows:
		return "follows symbolic links"
	case riskReads:
		return "reads more names or arguments from a file"
	case riskUnknown:
		return "fr-approve does not know to be harmless"
	case riskUnknownProg:
		return "is an option of a program whose options fr-approve does not know"
	}
	return ""
}

// optDef is one option of a row of programOptions.
type optDef struct {
	names []string // its spellings, as the row writes them (-o --output; go: -o)
	arg   argKind
	file  bool     // its value names a file, which paths: rules judge
	risk  riskKind // 0: known to be harmless
}

// optTable holds the options of a program, or of one of its subcommands.
type optTable struct {
	short   [128]*optDef
	long    map[string]*optDef // by name without dashes (getopt --name, go -name, find -name)
	prefix  []*optDef          // go: names ending in * match every name they begin (-debug.*)
	defs    []*optDef          // every option, for lint
	numeric bool               // -NUM is an option (head -20, grep -3, git log -5)
	negate  bool               // --no-NAME is NAME turned off (git)
}

// optStyle is how a program reads its options.
type optStyle uint8

const (
	// styleGetopt: getopt_long and its kin (git's parse-options, clap, nopt): -abc clusters,
	// -fVALUE or -f VALUE, --name, --name=v or --name v, options anywhere before --. A long
	// name is harmless only spelled out in full: an abbreviation is unknown.
	styleGetopt optStyle = iota
	// styleGo: Go's flag package: -name, --name, -name=v, -name v; no clusters, no
	// abbreviations. Every word of the line is read (go test takes flags after the packages,
	// and the test binary's -test.* after -args); -test.name is -name.
	styleGo
	// styleWords: whole words, anywhere (find's primaries, test's operators).
	styleWords
	// styleNone: no word is an option that matters (echo, true).
	styleNone
)

// progSpec is a row of programOptions.
type progSpec struct {
	style optStyle
	opts  *optTable // the options (before the subcommand, when there is one)
	// subs are the subcommands the table knows, with their options; a subcommand it does not
	// know has none known. With subcmd the first operand is the subcommand.
	subs   map[string]*optTable
	subcmd bool
	// globalAfter: the options of opts may also follow the subcommand (cargo, npm).
	globalAfter bool
	// afterDashDash: the words after -- are read with this table (cargo test -- --nocapture).
	afterDashDash *optTable
	// assigns: NAME=VALUE operands set variables of the program (make CC=./x, SHELL=..., MAKEFLAGS=...).
	assigns bool
	// writesOperand: the operand at this position (1-based) is a file the program writes (uniq IN OUT).
	writesOperand int
	// atFile: @FILE reads more arguments from FILE (pytest).
	atFile bool
	// oldStyle: the first argument is a cluster of short options even without a - (tar tf a.tar).
	oldStyle bool
	// args: go test's -args: the words after it are the test binary's, read with this table.
	args *optTable
}

// row builds a progSpec from option lists (see opts).
func row(style optStyle, spec string) *progSpec {
	return &progSpec{style: style, opts: opts(style, spec)}
}

// opts builds an option table from a list of options separated by blanks. Each is its
// spellings joined by | (-a|--all; go and find: -name), then =V when it takes a value or [=V]
// when the value is optional (glued only: -fV, --name=V), V being FILE when the value names a
// file, then !run, !cd, !write, !follow or !reads when it is not harmless. A short option
// -NUM means -NUM is an option (head -20); --no-* means git's --no-NAME.
func opts(style optStyle, spec string) *optTable {
	t := &optTable{long: map[string]*optDef{}}
	for _, f := range strings.Fields(spec) {
		switch f {
		case "-NUM":
			t.numeric = true
			continue
		case "--no-*":
			t.negate = true
			continue
		}
		d := &optDef{}
		if i := strings.IndexByte(f, '!'); i >= 0 {
			switch f[i+1:] {
			case "run":
				d.risk = riskRuns
			case "cd":
				d.risk = riskChdir
			case "write":
				d.risk = riskWrites
			case "follow":
				d.risk = riskFollows
			case "reads":
				d.risk = riskReads
			default:
				panic("options: bad risk in " + f)
			}
			f = f[:i]
		}
		switch {
		case strings.HasSuffix(f, "]"):
			i := strings.Index(f, "[=")
			d.arg, d.file, f = optArg, f[i+2:len(f)-1] == "FILE", f[:i]
		case strings.Contains(f, "="):
			i := strings.IndexByte(f, '=')
			d.arg, d.file, f = reqArg, f[i+1:] == "FILE", f[:i]
		}
		d.names = strings.Split(f, "|")
		for _, n := range d.names {
			switch {
			case style == styleGetopt && len(n) == 2 && n[0] == '-' && n[1] < 128:
				if t.short[n[1]] != nil {
					panic("options: " + n + " twice")
				}
				t.short[n[1]] = d
			case strings.HasSuffix(n, "*"):
				t.prefix = append(t.prefix, d)
			default:
				k := strings.TrimPrefix(n, "-")
				if style == styleGetopt {
					k = strings.TrimPrefix(n, "--")
				}
				if t.long[k] != nil {
					panic("options: " + n + " twice")
				}
				t.long[k] = d
			}
		}
		t.defs = append(t.defs, d)
	}
	return t
}

func (t *optTable) shortOpt(c byte) *optDef {
	if t == nil || c >= 128 {
		return nil
	}
	return t.short[c]
}

// longOpt finds the option spelled --name (getopt) or -name (go, find): exactly, never by
// abbreviation; git's --no-NAME is NAME.
func (t *optTable) longOpt(name string) *optDef {
	if t == nil {
		return nil
	}
	if d := t.long[name]; d != nil {
		return d
	}
	for _, d := range t.prefix {
		for _, n := range d.names {
			if strings.HasPrefix(strings.TrimLeft(name, "-"), strings.TrimSuffix(strings.TrimLeft(n, "-"), "*")) {
				return d
			}
		}
	}
	if t.negate && strings.HasPrefix(name, "no-") {
		if d := t.long[name[3:]]; d != nil && d.arg != reqArg {
			return d
		}
	}
	return nil
}

func init() {
	// the rows that share tables
	for _, name := range []string{"python -m pytest", "python3 -m pytest", "py.test"} {
		programOptions[name] = programOptions["pytest"]
	}
	programOptions["["] = programOptions["test"]
	for _, name := range []string{"true", "false", ":"} {
		programOptions[name] = programOptions["echo"]
	}
	programOptions["egrep"], programOptions["fgrep"] = programOptions["grep"], programOptions["grep"]
}

// Option lists shared by rows.
const (
	gitDiffOpts = `-p|-u|--patch -s|--no-patch -U|--unified=N --raw --patch-with-raw -t
		--indent-heuristic --no-indent-heuristic --minimal --patience --histogram --anchored=TEXT
		--diff-algorithm=ALGO --stat[=N] --stat-width=N --stat-name-width=N --stat-count=N
		--stat-graph-width=N --compact-summary --numstat --shortstat --dirstat[=P] -X[=P] --cumulative
		--dirstat-by-file[=P] --summary --patch-with-stat -z --name-only --name-status
		--submodule[=F] --color[=W] --no-color --color-moved[=M] --no-color-moved
		--color-moved-ws=M --no-color-moved-ws --word-diff[=M] --word-diff-regex=RE
		--color-words[=RE] --no-renames --rename-empty --no-rename-empty --check
		--ws-error-highlight=K --full-index --binary --abbrev[=N] --no-abbrev -B[=N]
		--break-rewrites[=N] -M[=N] --find-renames[=N] -C[=N] --find-copies[=N]
		--find-copies-harder -D --irreversible-delete -l=N --diff-filter=F -S=STRING -G=RE
		--find-object=ID --pickaxe-all --pickaxe-regex -O=FILE --skip-to=FILE --rotate-to=FILE -R
		--relative[=P] --no-relative -a|--text --ignore-cr-at-eol --ignore-space-at-eol
		-b|--ignore-space-change -w|--ignore-all-space --ignore-blank-lines
		-I|--ignore-matching-lines=RE --inter-hunk-context=N -W|--function-context --exit-code
		--quiet --no-ext-diff --no-textconv --ignore-submodules[=W] --src-prefix=P
		--dst-prefix=P --no-prefix --default-prefix --line-prefix=P --ita-invisible-in-index
		--ita-visible-in-index --output-indicator-new=C --output-indicator-old=C
		--output-indicator-context=C
		--ext-diff!run --textconv!run --output=FILE!write`
	gitRevOpts = `-NUM -n|--max-count=N --skip=N --since=D --after=D --until=D --before=D
		--since-as-filter=D --author=P --committer=P --grep=P --grep-reflog=P --all-match
		--invert-grep -i|--regexp-ignore-case --basic-regexp -E|--extended-regexp
		-F|--fixed-strings -P|--perl-regexp --remove-empty --merges --no-merges
		--min-parents=N --max-parents=N --no-min-parents --no-max-parents --first-parent
		--exclude-first-parent-only --not --all --branches[=P] --tags[=P] --remotes[=P]
		--glob=P --exclude=P --reflog --single-worktree --ignore-missing --cherry-mark
		--cherry-pick --left-only --right-only --cherry -g|--walk-reflogs --merge --boundary
		--simplify-by-decoration --show-pulls --full-history --dense --sparse
		--simplify-merges --ancestry-path[=C] --date-order --author-date-order --topo-order
		--reverse --no-walk[=S] --do-walk --pretty[=F] --format=F --abbrev-commit
		--no-abbrev-commit --oneline --encoding=E --expand-tabs[=N] --no-expand-tabs
		--notes[=R] --no-notes --show-notes[=R] --relative-date --date=F --parents --children
		--left-right --graph --show-linear-break[=B] -c --cc --dd -m --diff-merges=F
		--no-diff-merges --combined-all-paths -r --decorate[=S] --no-decorate
		--decorate-refs=P --decorate-refs-exclude=P --clear-decorations --source
		--use-mailmap --mailmap --no-use-mailmap --no-mailmap --full-diff --log-size -L=RANGE
		--follow --no-follow -q`
	goBuildOpts = `-a -n -p=N -race -msan -asan -cover -covermode=M -coverpkg=P -v -work -x
		-buildvcs[=B] -mod=M -modcacherw -tags=T -trimpath -pgo=FILE -installsuffix=S -json
		-exec=FILE!run -toolexec=FILE!run -vettool=FILE!run -overlay=FILE!run -modfile=FILE!run
		-ldflags=F!run -gcflags=F!run -asmflags=F!run -gccgoflags=F!run -compiler=C!run
		-C=FILE!cd -o=FILE!write -pkgdir=FILE!write -debug-actiongraph=FILE!write
		-debug-trace=FILE!write -debug-runtime-trace=FILE!write`
	goTestOpts = `-bench=RE -benchmem -benchtime=T -count=N -cpu=L -failfast -fullpath
		-fuzz=RE -fuzzminimizetime=T -fuzztime=T -list=RE -parallel=N -run=RE -short
		-shuffle=S -skip=RE -timeout=T -vet=L -c -memprofilerate=N -blockprofilerate=N
		-mutexprofilefraction=N -paniconexit0 -testlogfile=FILE!write -coverprofile=FILE!write
		-cpuprofile=FILE!write -memprofile=FILE!write -blockprofile=FILE!write
		-mutexprofile=FILE!write -trace=FILE!write -outputdir=FILE!write -gocoverdir=FILE!write
		-fuzzcachedir=FILE!write`
	cargoBuildOpts = `-p|--package=SPEC --workspace --all --exclude=SPEC --lib --bins --bin=NAME
		--examples --example=NAME --tests --test=NAME --benches --bench=NAME --all-targets
		-F|--features=F --all-features --no-default-features -r|--release --profile=NAME
		-j|--jobs=N --keep-going --target=TRIPLE --message-format=F --ignore-rust-version
		--future-incompat-report --target-dir=FILE!write --artifact-dir=FILE!write
		--out-dir=FILE!write`
	pytestOpts = `-x|--exitfirst -q|--quiet -v|--verbose -k=EXPR -m=MARKEXPR -r=CHARS -s -l|--showlocals
		--tb=STYLE --lf|--last-failed --ff|--failed-first --nf|--new-first --sw|--stepwise
		--sw-skip|--stepwise-skip --maxfail=N --co|--collect-only --durations=N
		--durations-min=N --no-header --no-summary --strict-markers --strict --disable-warnings
		--disable-pytest-warnings --capture=METHOD --setup-show --setup-only --setup-plan
		--import-mode=MODE --doctest-modules --color=W --code-highlight=W --full-trace
		--runxfail --deselect=ID --ignore=FILE --ignore-glob=GLOB
		--fixtures --fixtures-per-test --markers -h|--help --version -V --verbosity=N
		--lfnf|--last-failed-no-failures=W --cache-show[=GLOB] --noconftest --keep-duplicates
		--continue-on-collection-errors --no-showlocals
		-p=MODULE!run -c|--config-file=FILE!run -o|--override-ini=KV!run --inifile=FILE!run
		--rootdir=FILE!run --confcutdir=FILE!run --pdbcls=MODULE!run --pdb!run --trace!run
		-W|--pythonwarnings=W!run
		--basetemp=FILE!write --junitxml|--junit-xml=FILE!write --result-log=FILE!write
		--report-log=FILE!write --debug[=FILE]!write --log-file=FILE!write --pastebin=MODE!write
		--cache-clear!write`
)

// programOptions is the one table of the options of the programs fr-approve knows. Each row
// is reviewed against the program's manual: an option is listed without a ! only when it
// reads, prints or chooses what is shown. lint reads it too.
var programOptions = map[string]*progSpec{
	"echo": {style: styleNone},
	"pwd":  row(styleGetopt, `-L|--logical -P|--physical --help --version`),
	"which": row(styleGetopt, `-a|--all -s --skip-alias --skip-functions --skip-dot --skip-tilde
		--show-dot --show-tilde --read-alias --read-functions --tty-only --help --version`),
	// test -v and -R read a variable, whose subscript the shell analysis judges
	"test": row(styleWords, `-a -b -c -d -e -f -g -h -k -p -r -s -t -u -w -x -G -L -N -O -S -z -n
		-o -v -R -eq -ne -lt -le -gt -ge -ef -nt -ot`),
	// read's -a, printf -v NAME assign a variable, which the shell analysis judges
	"read": row(styleGetopt, `-r -s -e -a=NAME -d=DELIM -i=TEXT -n=N -N=N -p=PROMPT -t=T -u=FD`),
	// printf -v NAME assigns a variable, which the shell analysis judges
	"printf": row(styleGetopt, `-v=NAME`),
	"ls": row(styleGetopt, `-a|--all -A|--almost-all --author -b|--escape --block-size=SIZE
		-B|--ignore-backups -c -C --color[=W] -d|--directory -D|--dired -f -F --classify[=W]
		--file-type --format=WORD --full-time -g --group-directories-first -G|--no-group
		-h|--human-readable --si -H|--dereference-command-line
		--dereference-command-line-symlink-to-dir --hide=PAT --hyperlink[=W]
		--indicator-style=WORD -i|--inode -I|--ignore=PAT -k|--kibibytes -l -m
		-n|--numeric-uid-gid -N|--literal -o -p -q|--hide-control-chars --show-control-chars
		-Q|--quote-name --quoting-style=WORD -r|--reverse -R|--recursive -s|--size -S
		--sort=WORD --time=WORD --time-style=STYLE -t -T|--tabsize=N -u -U -v -w|--width=N -x -X
		-Z|--context --zero -1 --help --version -L|--dereference!follow`),
	"cat": row(styleGetopt, `-A|--show-all -b|--number-nonblank -e -E|--show-ends -n|--number
		-s|--squeeze-blank -t -T|--show-tabs -u -v|--show-nonprinting --help --version`),
	"head": row(styleGetopt, `-NUM -c|--bytes=N -n|--lines=N -q|--quiet|--silent -v|--verbose
		-z|--zero-terminated --help --version`),
	"tail": row(styleGetopt, `-NUM -c|--bytes=N -n|--lines=N -f --follow[=HOW] -F --retry
		--max-unchanged-stats=N --pid=PID -q|--quiet|--silent -s|--sleep-interval=N
		-v|--verbose -z|--zero-terminated --help --version`),
	"wc": row(styleGetopt, `-c|--bytes -m|--chars -l|--lines -L|--max-line-length -w|--words
		--total=WHEN --help --version --files0-from=FILE!reads`),
	"grep": row(styleGetopt, `-NUM -E|--extended-regexp -F|--fixed-strings -G|--basic-regexp
		-P|--perl-regexp -e|--regexp=PAT -f|--file=FILE -i|-y|--ignore-case --no-ignore-case
		-v|--invert-match -w|--word-regexp -x|--line-regexp -c|--count --color|--colour[=W]
		-L|--files-without-match -l|--files-with-matches -m|--max-count=N -o|--only-matching
		-q|--quiet|--silent -s|--no-messages -b|--byte-offset -H|--with-filename
		-h|--no-filename --label=LABEL -n|--line-number -T|--initial-tab -Z|--null
		-z|--null-data -A|--after-context=N -B|--before-context=N -C|--context=N -a|--text
		--binary-files=TYPE -D|--devices=ACTION -d|--directories=ACTION --exclude=GLOB
		--exclude-from=FILE --exclude-dir=GLOB --include=GLOB -r|--recursive -U|--binary -I
		--line-buffered -V|--version --help -R|--dereference-recursive!follow`),
	"rg": row(styleGetopt, `-N|--no-line-number -n|--line-number -i|--ignore-case
		-s|--case-sensitive -S|--smart-case -F|--fixed-strings -w|--word-regexp
		-x|--line-regexp -v|--invert-match -c|--count --count-matches -l|--files-with-matches
		--files-without-match -H|--with-filename -I|--no-filename --heading --no-heading
		-A|--after-context=N -B|--before-context=N -C|--context=N -e|--regexp=PAT -f|--file=FILE
		-g|--glob=GLOB --iglob=GLOB -t|--type=T -T|--type-not=T --type-list -u|--unrestricted
		--hidden -.|--no-hidden --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-global
		--no-ignore-parent --no-ignore-exclude --no-ignore-files --ignore-file=FILE
		-m|--max-count=N -M|--max-columns=N --max-columns-preview -o|--only-matching
		-p|--pretty -q|--quiet --json --files --stats --sort=BY --sortr=BY --color=W
		--colors=SPEC -r|--replace=TEXT -a|--text -j|--threads=N -0|--null --column
		--vimgrep -b|--byte-offset --trim -d|--max-depth=N --max-filesize=N --engine=E
		-E|--encoding=E --path-separator=S --context-separator=S --no-context-separator
		--field-match-separator=S --field-context-separator=S --no-messages --include-zero
		--passthru --line-buffered -U|--multiline --multiline-dotall -P|--pcre2 --no-config
		--debug --trace --help -h -V|--version --no-unicode --crlf --null-data
		--one-file-system --no-require-git --block-buffered --binary --no-binary
		-L|--follow!follow -z|--search-zip!run --pre=FILE!run --pre-glob=GLOB!run
		--hostname-bin=FILE!run`),
	"sort": row(styleGetopt, `-b|--ignore-leading-blanks -d|--dictionary-order -f|--ignore-case
		-g|--general-numeric-sort -i|--ignore-nonprinting -M|--month-sort
		-h|--human-numeric-sort -n|--numeric-sort -R|--random-sort --random-source=FILE
		-r|--reverse --sort=WORD -V|--version-sort -c --check[=WHEN] -C -k|--key=KEYDEF
		-m|--merge -s|--stable -S|--buffer-size=SIZE -t|--field-separator=SEP -u|--unique
		-z|--zero-terminated --parallel=N --batch-size=N --debug --help --version
		-o|--output=FILE!write -T|--temporary-directory=FILE!write --compress-program=PROG!run
		--files0-from=FILE!reads`),
	"uniq": {opts: opts(styleGetopt, `-c|--count -d|--repeated -D --all-repeated[=M]
		-f|--skip-fields=N --group[=M] -i|--ignore-case -s|--skip-chars=N -u|--unique
		-z|--zero-terminated -w|--check-chars=N --help --version`), writesOperand: 2},
	"diff": row(styleGetopt, `--normal -q|--brief -s|--report-identical-files -c -C|--context[=N]
		-u -U|--unified[=N] -e|--ed -n|--rcs -y|--side-by-side -W|--width=N --left-column
		--suppress-common-lines -p|--show-c-function -F|--show-function-line=RE --label=L
		-t|--expand-tabs -T|--initial-tab --tabsize=N --suppress-blank-empty -N|--new-file
		--unidirectional-new-file --no-dereference -x|--exclude=PAT -X|--exclude-from=FILE
		-S|--starting-file=FILE --from-file=FILE --to-file=FILE -i|--ignore-case
		--ignore-file-name-case --no-ignore-file-name-case -E|--ignore-tab-expansion
		-Z|--ignore-trailing-space -b|--ignore-space-change -w|--ignore-all-space
		-B|--ignore-blank-lines -I|--ignore-matching-lines=RE -a|--text --strip-trailing-cr
		-D|--ifdef=NAME --color[=W] --palette=P -d|--minimal --speed-large-files
		--horizon-lines=N --help -v|--version -r|--recursive!follow -l|--paginate!run`),
	"tree": row(styleGetopt, `-a -d -f -x -L=N -P=PAT -I=PAT --gitignore --ignore-case --matchdirs
		--metafirst --prune --info --noreport --charset=C --filelimit=N --timefmt=F -q -N -Q -p
		-u -g -s -h --si --du -D -F --inodes --device -v -t -c -U -r --dirsfirst --filesfirst
		--sort=S -i -A -S -n -C -X -J -H=BASE -T=TITLE --nolinks --version --help
		-l!follow -R!write -o=FILE!write --fromfile!reads --infofile=FILE!reads`),
	"file": row(styleGetopt, `-b|--brief -c|--checking-printout -d --debug -E -e|--exclude=TEST
		--exclude-quiet=TEST --extension -F|--separator=SEP -h|--no-dereference
		-i|--mime --mime-type --mime-encoding --apple -k|--keep-going -l|--list
		-L|--dereference -m|--magic-file=FILE -N|--no-pad -n|--no-buffer -P|--parameter=NV
		-r|--raw -s|--special-files -v|--version -0|--print0 --help
		-C|--compile!write -f|--files-from=FILE!reads -z|--uncompress!run
		-Z|--uncompress-noreport!run -p|--preserve-date!write`),
	"stat": row(styleGetopt, `-L|--dereference -f|--file-system -c|--format=FMT --printf=FMT
		-t|--terse --cached=MODE --help --version`),
	"du": row(styleGetopt, `-0|--null -a|--all --apparent-size -B|--block-size=SIZE -b|--bytes
		-c|--total -D|-H|--dereference-args -d|--max-depth=N -h|--human-readable --inodes
		-k -m -P|--no-dereference -S|--separate-dirs --si -s|--summarize -t|--threshold=SIZE
		--time[=WORD] --time-style=STYLE -X|--exclude-from=FILE --exclude=PAT
		-x|--one-file-system -l|--count-links --help --version -L|--dereference!follow
		--files0-from=FILE!reads`),
	"df": row(styleGetopt, `-a|--all -B|--block-size=SIZE -h|--human-readable -H|--si
		-i|--inodes -k -l|--local --no-sync --sync --output[=FIELDS] -P|--portability
		-t|--type=T -T|--print-type -x|--exclude-type=T -v --total --help --version`),
	"find": row(styleWords, `-P -D=OPTS -O3 -O2 -O1 -O0 -name=PAT -iname=PAT -path=PAT
		-ipath=PAT -wholename=PAT -iwholename=PAT -regex=RE -iregex=RE -regextype=T
		-lname=PAT -ilname=PAT -type=T -xtype=T -maxdepth=N -mindepth=N -depth -d -mount
		-xdev -noleaf -ignore_readdir_race -noignore_readdir_race -daystart -follow!follow
		-newer=FILE -anewer=FILE -cnewer=FILE -newerXY=FILE -samefile=FILE -size=N -empty
		-mtime=N -mmin=N -atime=N -amin=N -ctime=N -cmin=N -used=N -perm=MODE -user=U
		-group=G -uid=N -gid=N -nouser -nogroup -links=N -inum=N -readable -writable
		-executable -fstype=T -context=C -true -false -prune -quit -print -print0 -printf=F
		-ls -not -and -or -a -o -help --help -version --version
		-L!follow -H!follow -delete!write -fprint=FILE!write -fprint0=FILE!write
		-fprintf=FILE!write -fls=FILE!write -files0-from=FILE!reads`),
	"make": {opts: opts(styleGetopt, `-j|--jobs[=N] -k|--keep-going -S|--no-keep-going|--stop
		-s|--silent|--quiet --no-silent -B|--always-make -i|--ignore-errors -n|--just-print|--dry-run|--recon
		-q|--question -r|--no-builtin-rules -R|--no-builtin-variables -w|--print-directory
		--no-print-directory -O|--output-sync[=TYPE] -l|--load-average|--max-load[=N]
		-e|--environment-overrides -d --debug[=FLAGS] -p|--print-data-base -v|--version
		-h|--help --warn-undefined-variables --trace -L|--check-symlink-times --shuffle[=MODE]
		-o|--old-file|--assume-old=FILE -W|--what-if|--new-file|--assume-new=FILE
		-C|--directory=FILE!cd -f|--file|--makefile=FILE!run -I|--include-dir=FILE!run
		-E|--eval=TEXT!run -t|--touch!write`), assigns: true},
	"git": {subcmd: true, opts: opts(styleGetopt, `--no-pager -P --no-replace-objects
		--literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs
		--no-optional-locks --no-advice --version -C=FILE!cd -c=NAMEVALUE!run
		--config-env=NAMEVAR!run --exec-path[=FILE]!run --git-dir=FILE!run --work-tree=FILE!run
		--namespace=NAME!run --super-prefix=P!run --attr-source=T!run -p|--paginate!run
		--bare!run`),
		subs: map[string]*optTable{
			"status": opts(styleGetopt, `--no-* -s|--short -b|--branch --show-stash --porcelain[=V]
				--long -v|--verbose -u|--untracked-files[=MODE] --ignore-submodules[=W]
				--ignored[=MODE] -z --column[=O] --no-column --ahead-behind --no-ahead-behind
				--renames --no-renames --find-renames[=N]`),
			"diff": opts(styleGetopt, `--no-* `+gitDiffOpts+` --cached --staged --merge-base
				--no-index -0 -1 -2 -3 --base --ours --theirs`),
			"log":  opts(styleGetopt, `--no-* `+gitDiffOpts+` `+gitRevOpts),
			"show": opts(styleGetopt, `--no-* `+gitDiffOpts+` `+gitRevOpts),
			"blame": opts(styleGetopt, `--no-* -b --root --show-stats -L=RANGE -l -t -S=FILE
				--reverse --first-parent -p|--porcelain --line-porcelain --incremental
				--encoding=E --contents=FILE --date=F --progress -M[=N] -C[=N]
				--ignore-rev=REV --ignore-revs-file=FILE -c --score-debug -f|--show-name
				-n|--show-number -s -e|--show-email -w --abbrev[=N] --color-lines
				--color-by-age --minimal --since=D`),
			"rev-parse": opts(styleGetopt, `--abbrev-ref[=M] --short[=N] --verify -q|--quiet
				--show-toplevel --show-prefix --show-cdup --git-dir --git-common-dir
				--absolute-git-dir --is-inside-work-tree --is-inside-git-dir
				--is-bare-repository --is-shallow-repository --symbolic --symbolic-full-name
				--all --branches[=P] --tags[=P] --remotes[=P] --glob=P --exclude=P
				--local-env-vars --path-format=F --show-object-format[=M]
				--show-superproject-working-tree --shared-index-path --sq --sq-quote
				--revs-only --no-revs --flags --no-flags --default=ARG --since=D --until=D
				--after=D --before=D --git-path=P --disambiguate=P --end-of-options`),
			"ls-files": opts(styleGetopt, `--no-* -c|--cached -d|--deleted -m|--modified
				-o|--others -i|--ignored -s|--stage -u|--unmerged -k|--killed -z -t -v -f
				--directory --no-empty-directory --eol --deduplicate -x|--exclude=PAT
				-X|--exclude-from=FILE --exclude-per-directory=NAME --exclude-standard
				--error-unmatch --with-tree=TREE --full-name --recurse-submodules --abbrev[=N]
				--debug --format=F --sparse --resolve-undo`),
			"branch": opts(styleGetopt, `-l|--list -a|--all -r|--remotes -v|--verbose
				--contains=C --no-contains=C --merged=C --no-merged=C --points-at=O --sort=KEY
				--format=F --color[=W] --no-color --column[=O] --no-column --show-current
				-i|--ignore-case --abbrev[=N] --no-abbrev -q|--quiet --omit-empty`),
		}},
	"go": {style: styleGo, subcmd: true, opts: opts(styleGo, ``),
		subs: map[string]*optTable{
			"build":        opts(styleGo, goBuildOpts),
			"test":         opts(styleGo, goBuildOpts+" "+goTestOpts),
			"vet":          opts(styleGo, goBuildOpts),
			"list":         opts(styleGo, goBuildOpts+` -f=TEMPLATE -m -u -e -deps -test -find -export -compiled -retracted -versions -reuse=FILE`),
			"env":          opts(styleGo, `-json -changed -w!write -u!write`),
			"version":      opts(styleGo, `-m -v -json`),
			"mod tidy":     opts(styleGo, `-v -e -x -go=V -compat=V -diff`),
			"mod download": opts(styleGo, `-json -x -reuse=FILE`),
			"mod verify":   opts(styleGo, ``),
			"mod graph":    opts(styleGo, `-go=V -x`),
			"mod why":      opts(styleGo, `-m -vendor`),
		},
		args: opts(styleGo, goTestOpts+` -v -json`)},
	"gofmt": row(styleGo, `-l -d -e -s -w!write -r=RULE!write -cpuprofile=FILE!write`),
	"staticcheck": row(styleGo, `-checks=C -f=F -fail=C -go=V -tags=T -tests -show-ignored -merge
		-version -explain=C -list-checks -matrix -debug.*!write`),
	"tar": {oldStyle: true, opts: opts(styleGetopt, `-t|--list -v|--verbose -z|--gzip|--gunzip
		-j|--bzip2 -J|--xz --zstd --lzma --lzip --lzop -a|--auto-compress --wildcards
		--no-wildcards --anchored --no-anchored --exclude=PAT -O|--to-stdout --totals --help
		--version --full-time --numeric-owner --utc -X|--exclude-from=FILE!reads
		-T|--files-from=FILE!reads --to-command=PROG!run -I|--use-compress-program=PROG!run
		--checkpoint-action=A!run -F|--info-script|--new-volume-script=FILE!run
		--rsh-command=PROG!run --rmt-command=PROG!run -C|--directory=FILE!cd
		-x|--extract|--get!write -c|--create!write -r|--append!write -u|--update!write
		-A|--catenate|--concatenate!write --delete!write -f|--file=FILE!write -b=N -g=FILE!write
		-H|--format=F -K=NAME -L=N -N=DATE -V=NAME`)},
	"cargo": {subcmd: true, globalAfter: true,
		opts: opts(styleGetopt, `-v|--verbose -q|--quiet --color=W --frozen --locked --offline
			-h|--help -V|--version --config=KV!run -Z=FLAG!run -C=FILE!cd
			--manifest-path=FILE!cd`),
		subs: map[string]*optTable{
			"build": opts(styleGetopt, cargoBuildOpts),
			"check": opts(styleGetopt, cargoBuildOpts),
			"test":  opts(styleGetopt, cargoBuildOpts+" --no-run --no-fail-fast --doc"),
		},
		afterDashDash: opts(styleGetopt, `--nocapture --no-capture --test-threads=N --ignored
			--include-ignored --exact --skip=F -q|--quiet --list --format=F --show-output
			--color=W --report-time --shuffle --shuffle-seed=N --test --bench --logfile=FILE!write
			-Z=FLAG!run`)},
	"npm": {subcmd: true, globalAfter: true,
		opts: opts(styleGetopt, `-s|--silent -q|--quiet -d|--verbose --loglevel=L --if-present
			--color=W --no-color -h|--help -v|--version -C|--prefix=FILE!cd -w|--workspace=FILE!cd
			--workspaces!cd --script-shell=FILE!run --shell=FILE!run --userconfig=FILE!run
			--globalconfig=FILE!run --node-options=OPTS!run --call=CMD!run --cache=FILE!write`),
		subs: map[string]*optTable{"test": opts(styleGetopt, ``), "t": opts(styleGetopt, ``),
			"run": opts(styleGetopt, ``), "run-script": opts(styleGetopt, ``)},
		// the words after -- go to the package's script, whose options are not known
		afterDashDash: opts(styleGetopt, ``)},
	"pytest": {opts: opts(styleGetopt, pytestOpts), atFile: true},
}

// riskyUse is a word of a command line an allow rule must name: an option that is not known
// to be harmless, a variable it sets, an operand it writes, or @FILE.
type riskyUse struct {
	at    int     // the word
	opt   *optDef // the option, when the table lists it
	spell string  // the option as written (-x of a cluster, --name, go's -name), or the word
	kind  riskKind
}

// specFor returns the row for a part and the index of its first argument.
func specFor(p *Part) (*progSpec, int) {
	if len(p.Words) == 0 || p.dyn(0) {
		return nil, 0
	}
	if s := programOptions[p.Name]; s != nil {
		return s, 1
	}
	if len(p.Words) >= 3 && !p.dyn(1) && !p.dyn(2) {
		if s := programOptions[p.Name+" "+p.Words[1]+" "+p.Words[2]]; s != nil {
			return s, 3
		}
	}
	return nil, 0
}

// Where a word may name a file, for paths: rules (optRead.paths), besides what wrappers.go's
// argKind says of the value an option takes (reqArg: -fV or -f V; optArg: -fV only). The word itself unless it
// is an option; a value glued to an option from its byte k; every tail from k when the
// reading is not sure where a value would start.
const (
	pathIsWord  int32 = 0       // the word itself
	pathNone    int32 = 1 << 28 // an option without a value: no file
	pathAlsoAll int32 = 1 << 29 // the whole word too (a value that looks like an option)
	pathTails   int32 = 1 << 30 // with an offset k: every tail of the word from k
	pathFile    int32 = 1 << 27 // the value is one the table says names a file
	pathOffset  int32 = 1<<27 - 1
)

func fileBit(d *optDef) int32 {
	if d != nil && d.file {
		return pathFile
	}
	return 0
}

// optRead is a part's words as its program reads its options, computed once.
type optRead struct {
	uses  []riskyUse
	paths []int32 // per word, pathIsWord, pathNone, an offset or pathTails|offset; nil: all pathIsWord
	small [8]int32
}

// riskyUses lists the words of p an allow rule must name (computed once).
func (p *Part) riskyUses() []riskyUse { return p.options().uses }

func (p *Part) options() *optRead {
	if p.riskyDone {
		return &p.opt
	}
	p.riskyDone = true
	r := &p.opt
	s, start := specFor(p)
	if s == nil {
		unknownProgram(p, r)
		return r
	}
	switch s.style {
	case styleGo:
		s.readGo(p, start, r)
	case styleWords:
		s.readWords(p, start, r)
	case styleNone:
	default:
		s.readGetopt(p, start, r)
	}
	return r
}

func (r *optRead) use(at int, spell string, d *optDef, kind riskKind) {
	r.uses = append(r.uses, riskyUse{at: at, opt: d, spell: spell, kind: kind})
}

func (r *optRead) setPath(p *Part, i int, v int32) {
	if r.paths == nil {
		if len(p.Words) <= len(r.small) {
			r.paths = r.small[:len(p.Words)] // most commands: no allocation
		} else {
			r.paths = make([]int32, len(p.Words))
		}
	}
	old := r.paths[i]
	switch {
	case v == pathAlsoAll:
		r.paths[i] = old | pathAlsoAll
	case old&pathTails != 0:
		// already every tail from an earlier byte
	default:
		r.paths[i] = v | old&(pathAlsoAll|pathFile)
	}
}

// PathCandidates lists what word i of p may name as a file, as its program reads it: an
// operand or an option's value in a word of its own is the word; a value glued to an option
// (-fFILE, -iFFILE, --file=FILE, go's -o=FILE) starts after the letter or = that takes it;
// where the reading is unsure (a letter the table does not know, a program it does not know)
// every tail of the word that may be a value is a candidate.
func (p *Part) PathCandidates(i int) []string {
	w := p.Words[i]
	if w == "" {
		return nil
	}
	r := p.options()
	v := pathIsWord
	if r.paths != nil {
		v = r.paths[i] &^ pathFile
	}
	if v == pathIsWord {
		return []string{w}
	}
	var out []string
	if v&pathAlsoAll != 0 {
		out = append(out, w)
	}
	off := int(v & pathOffset)
	switch {
	case v&pathTails != 0:
		for k := off; k < len(w); k++ {
			out = append(out, w[k:])
		}
	case v&pathNone == 0 && off > 0 && off < len(w):
		out = append(out, w[off:])
	}
	return out
}

// NamesFile reports whether word i of p is, or holds glued, the value of an option the table
// says names a file (grep -f FILE, --file=FILE, -iFfFILE, go's -o=FILE, find -newer FILE).
func (p *Part) NamesFile(i int) bool {
	r := p.options()
	return r.paths != nil && r.paths[i]&pathFile != 0 && r.paths[i]&pathTails == 0
}

// unknownProgram: every word that looks like an option needs naming; where a value may start
// in it is not known, so every tail from its second byte (and the value after =) is a path.
func unknownProgram(p *Part, r *optRead) {
	for i := 1; i < len(p.Words); i++ {
		w := p.Words[i]
		if p.dyn(i) || len(w) < 2 || w[0] != '-' || w == "--" {
			continue
		}
		spell := w
		if strings.HasPrefix(w, "--") {
			if n, _, ok := strings.Cut(w, "="); ok {
				spell = n
				r.setPath(p, i, int32(len(n)+1))
			} else {
				r.setPath(p, i, pathNone)
			}
		} else {
			r.setPath(p, i, pathTails|2)
		}
		r.use(i, spell, nil, riskUnknownProg)
	}
}

// readGetopt reads the words as getopt_long does, erring towards refusing: a letter of a
// cluster the table does not know is an option that needs naming, and where its value would
// start is not known; a value in the next word that looks like an option is read as one.
func (s *progSpec) readGetopt(p *Part, start int, r *optRead) {
	t := s.opts
	var fallback *optTable
	global := s.subcmd
	operands, dashed := 0, false
	for i := start; i < len(p.Words); i++ {
		if p.dyn(i) {
			continue
		}
		w := p.Words[i]
		switch {
		case dashed || w == "-" || w == "" || w[0] != '-':
			if i == start && s.oldStyle && !dashed && w != "" && w != "-" {
				i = s.short(p, t, nil, i, "-"+w, -1, r)
				continue
			}
			operands++
			switch {
			case global:
				global = false
				sub := w
				if s.globalAfter {
					fallback = s.opts
				}
				t = s.subs[sub]
				if t == nil {
					t = &optTable{} // a subcommand the table does not know: no option is known
				}
			case s.assigns && strings.Contains(w, "=") && !strings.HasPrefix(w, "="):
				r.use(i, w[:strings.IndexByte(w, '=')+1], nil, riskRuns)
			case s.writesOperand == operands:
				r.use(i, w, nil, riskWrites)
			case s.atFile && strings.HasPrefix(w, "@"):
				r.use(i, "@", nil, riskReads)
			}
		case w == "--":
			r.setPath(p, i, pathNone)
			if s.afterDashDash != nil && !global {
				t, fallback = s.afterDashDash, nil
				continue
			}
			dashed = true
		case strings.HasPrefix(w, "--"):
			i = s.long(p, t, fallback, i, w, r)
		default:
			i = s.short(p, t, fallback, i, w, 0, r)
		}
	}
}

// value reads the word after an option that takes one (i is the option's word): the word is
// its value, unless it looks like an option, which is then read as one and judged as a path
// too. It returns the index of the last word used.
func valueWord(p *Part, i int, d *optDef, r *optRead) int {
	if i+1 >= len(p.Words) {
		return i
	}
	r.setPath(p, i+1, fileBit(d))
	if n := p.Words[i+1]; p.dyn(i+1) || n == "" || n == "-" || n[0] != '-' {
		return i + 1
	}
	r.setPath(p, i+1, pathAlsoAll)
	return i
}

func (s *progSpec) long(p *Part, t, fallback *optTable, i int, w string, r *optRead) int {
	name, _, hasEq := strings.Cut(w[2:], "=")
	d := t.longOpt(name)
	if d == nil {
		d = fallback.longOpt(name)
	}
	if hasEq {
		r.setPath(p, i, int32(2+len(name)+1)|fileBit(d))
	} else {
		r.setPath(p, i, pathNone)
	}
	if d == nil {
		r.use(i, "--"+name, nil, riskUnknown)
		return i // its value, if it takes one, is judged as an operand
	}
	if d.risk != 0 {
		r.use(i, "--"+name, d, d.risk)
	}
	if !hasEq && d.arg == reqArg {
		return valueWord(p, i, d, r)
	}
	return i
}

// short reads a cluster of short options (w begins with -); shift is -1 when w is tar's
// first argument given without its -.
func (s *progSpec) short(p *Part, t, fallback *optTable, i int, w string, shift int, r *optRead) int {
	at := func(j int) int32 { return int32(j + shift) }
	if len(w) > 1 && (t != nil && t.numeric || fallback != nil && fallback.numeric) && isDigits(w[1:]) {
		r.setPath(p, i, pathNone)
		return i // -NUM
	}
	r.setPath(p, i, pathNone)
	for j := 1; j < len(w); j++ {
		c := w[j]
		d := t.shortOpt(c)
		if d == nil {
			d = fallback.shortOpt(c)
		}
		if d == nil {
			r.use(i, "-"+string(c), nil, riskUnknown)
			if j+1 < len(w) {
				r.setPath(p, i, pathTails|at(j+1)) // if it takes a value, it starts here
			}
			continue // the letters after it must be known too
		}
		if d.risk != 0 {
			r.use(i, "-"+string(c), d, d.risk)
		}
		if d.arg == noArg {
			continue
		}
		if j+1 < len(w) {
			r.setPath(p, i, at(j+1)|fileBit(d))
			return i
		}
		if d.arg == reqArg {
			return valueWord(p, i, d, r)
		}
		return i
	}
	return i
}

// goName is a Go flag's name: -name, --name, -name=v; -test.name is name.
func goName(w string) (string, bool) {
	if len(w) < 2 || w[0] != '-' || w == "--" {
		return "", false
	}
	n := strings.TrimPrefix(strings.TrimPrefix(w, "-"), "-")
	n, _, _ = strings.Cut(n, "=")
	return strings.TrimPrefix(n, "test."), n != ""
}

// readGo reads the words as Go's flag package and the go command do: every word of the line
// (flags may follow the packages), -args handing the rest to the test binary.
func (s *progSpec) readGo(p *Part, start int, r *optRead) {
	t := s.opts
	global := s.subcmd
	sub := ""
	for i := start; i < len(p.Words); i++ {
		if p.dyn(i) {
			continue
		}
		w := p.Words[i]
		name, ok := goName(w)
		if !ok {
			if global {
				switch {
				case sub == "" && w == "mod":
					sub = w
					t = &optTable{}
					continue
				case sub == "mod":
					sub += " " + w
				default:
					sub = w
				}
				global = false
				t = s.subs[sub]
				if t == nil {
					t = &optTable{}
				}
			}
			continue
		}
		if name == "args" && sub == "test" && s.args != nil && strings.TrimLeft(w, "-") == "args" {
			r.setPath(p, i, pathNone)
			t = s.args
			continue
		}
		d := t.longOpt(name)
		if eq := strings.IndexByte(w, '='); eq >= 0 {
			r.setPath(p, i, int32(eq+1)|fileBit(d))
		} else {
			r.setPath(p, i, pathNone)
		}
		if d == nil {
			r.use(i, "-"+name, nil, riskUnknown)
			continue
		}
		if d.risk != 0 {
			r.use(i, "-"+name, d, d.risk)
		}
		if d.arg == reqArg && !strings.Contains(w, "=") {
			i = valueWord(p, i, d, r)
		}
	}
}

// readWords reads whole words anywhere (find, test): each word that looks like an option must
// be one the table knows; a known one taking a value takes the next word.
func (s *progSpec) readWords(p *Part, start int, r *optRead) {
	t := s.opts
	for i := start; i < len(p.Words); i++ {
		if p.dyn(i) {
			continue
		}
		w := p.Words[i]
		if len(w) < 2 || w[0] != '-' {
			continue
		}
		d := t.longOpt(strings.TrimPrefix(w, "-"))
		if d == nil && strings.HasPrefix(w, "-newer") && len(w) == len("-newerXY") {
			d = t.longOpt("newerXY")
		}
		r.setPath(p, i, pathNone)
		if d == nil {
			r.use(i, w, nil, riskUnknown)
			continue
		}
		if d.risk != 0 {
			r.use(i, w, d, d.risk)
		}
		if d.arg == reqArg && i+1 < len(p.Words) {
			i++ // its value, whatever it looks like
			r.setPath(p, i, fileBit(d))
		}
	}
}

// optionAllowed reports whether one of spellings (as a rule's allow_options writes them)
// names the use u.
func (s *progSpec) optionAllowed(u riskyUse, spellings []string) bool {
	goStyle := s != nil && s.style == styleGo
	for _, sp := range spellings {
		if sp == u.spell {
			return true
		}
		if goStyle {
			if n, ok := goName(sp); ok && "-"+n == u.spell {
				return true
			}
		}
		if u.opt == nil {
			continue
		}
		for _, n := range u.opt.names {
			if n == sp || goStyle && strings.HasSuffix(n, "*") && strings.HasPrefix(strings.TrimLeft(u.spell, "-"), strings.TrimSuffix(strings.TrimLeft(n, "-"), "*")) && sp == n {
				return true
			}
		}
	}
	return false
}

// riskyDefs lists the options of a row that are not harmless, each once, for lint.
func (s *progSpec) riskyDefs() []*optDef {
	var out []*optDef
	seen := map[*optDef]bool{}
	add := func(t *optTable) {
		if t == nil {
			return
		}
		for _, d := range t.defs {
			if d.risk != 0 && !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	add(s.opts)
	subs := make([]string, 0, len(s.subs))
	for k := range s.subs {
		subs = append(subs, k)
	}
	sort.Strings(subs)
	for _, k := range subs {
		add(s.subs[k])
	}
	add(s.afterDashDash)
	add(s.args)
	return out
}

// knowsSub reports whether the table knows the options of the subcommand that a pattern's
// words (after the program) name, for lint: "" when the program has no subcommands.
func (s *progSpec) knowsSub(words []string) (sub string, known bool) {
	if !s.subcmd || len(words) == 0 {
		return "", true
	}
	sub = words[0]
	if s.style == styleGo && sub == "mod" && len(words) > 1 {
		sub += " " + words[1]
	}
	_, known = s.subs[sub]
	return sub, known
}
