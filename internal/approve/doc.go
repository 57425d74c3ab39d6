package approve

const description = `fr-approve reads fuseraft events (stdin, or --input) and writes exactly one approval_response for
each approval_request and one question_response for each question, in order (stdout, or
--output). Responses are sent whenever the input has no whole line left to decide, and before a
person is asked anything: on a live stream, where the next prompt waits for its answer, each goes
the moment it is decided; a recorded stream is answered in blocks, at full speed. Every other
event, and every line that is not JSON, is ignored. The protocolVersion of ready and hello
events is checked.

A policy decides each prompt: allow, deny, or ask a person. Asking happens on the terminal
(/dev/tty, or --tty), never on stdin or stdout: a one-line summary (file writes as a unified diff,
coloured unless NO_COLOR), then "allow? [y/N]", as fr-attach asks it. y or yes allows; n, no or
an empty line denies; anything else answers nothing and is asked again; the answer is then shown
(✓ approved, ✗ denied). With no terminal, or no answer within --ask-timeout (counted from when
the prompt was first shown), the prompt is denied and recorded as no-tty or timeout, never as a
person's answer.

POLICY FORMAT
  version: 1                 # required
  default: deny              # deny (the default) or ask: for prompts no rule matches
  question_default: skip     # skip (answer null) or ask: for questions no rule answers
  rules:                     # named rules; when several match, the strictest wins:
                             # deny, then ask, then allow (file order breaks ties)
    - name: go-tools
      decision: allow        # allow, ask or deny
      shell: ["go build", "go test", "go vet", "gofmt -l"]
    - name: no-force-push
      decision: deny
      shell: ["git push ** --force", "git push ** -f"]
    - name: sources
      decision: allow
      file: {paths: ["**/*.go", "go.mod", "go.sum"], max_size: 100KB, max_changed_lines: 200}
    - name: private-keys
      decision: deny
      kind: file_write
      when: '.newContent | test("PRIVATE KEY")'
    - name: docs-fetch
      decision: allow
      tool: {plugin: web, action: fetch, detail: '/^https://pkg\.go\.dev//'}
    - name: planner-to-coder
      decision: allow
      route: {source: planner, target: coder}
      limit: {max: 20, per: session}     # or per: 1h
  questions:                 # the first rule that applies answers
    - {name: proceed, question: "*continue*", option: "Yes*"}
    - {name: name-it, question: "/branch name/", text: "fr-ci"}
    - {name: rest, skip: true}
  tests:                     # run by 'fr-approve test'
    - {command: "go test ./... && rm -rf /", expect: deny}
    - {event: {type: approval_request, kind: file_write, path: a.go, newContent: x}, expect: allow, rule: sources}

Unknown keys, bad globs, bad regular expressions and bad jq stop fr-approve before it reads any
input (exit 2), naming the file, the line and what is wrong.

shell (kind shell_command): argv patterns. A command is parsed as bash parses it, and every
simple command in it is judged on its own: pipelines, lists, loops, subshells, $(...) and
backticks, <(...), function bodies, the command strings of bash -c, sh -c, eval, watch, trap,
flock -c, su -c, ssh and alias, and what a shell or . (source) reads from a here-document or an
echo piped to it. The wrappers env, command, builtin, exec, nohup, nice, time, timeout, setsid,
stdbuf, chronic, ionice, busybox, toybox, xargs, flock, watch and find -exec/-execdir/-ok/-okdir
are seen through, their options read as their getopt_long reads them (clusters such as -vu X,
abbreviations such as --sig, --adj, --sp); an option a wrapper does not have means no allow,
and deny and ask rules then try every word after it as the command. sudo, doas, run0, pkexec,
su and ssh are not seen through for allow: "sudo X" must be allowed as written, and X is still
judged by deny and ask rules. /bin/rm and \rm are rm; ./rm is not rm for an allow rule (it is
for deny and ask). The strictest part decides the whole; a part no rule matches gets the
default. A pattern's words are globs (* ? [..]) or /regex/, matched one to one; ** stands for
any number of words; the pattern is a prefix ("git push" matches "git push origin main")
unless it ends with $.

What an allow rule matches: simple commands whose words are literal after quote removal
('..', "..." without $ or backquotes, \x), joined by &&, ||, ;, |, |& and newlines, each optionally
preceded by ! or the time keyword, with assignments of literal values to harmless names
before the command, and redirections that read a file (< f), duplicate a descriptor (2>&1) or
write to /dev/null, /dev/stdout, /dev/stderr or /dev/tty. Anything else stops an allow, and
check --format table names it in brackets. These constructs can be named, one by one, in
allow_constructs (shell: {commands: [...], allow_constructs: [heredoc, for]}): heredoc,
herestring, for, select, while, if, case, function, subshell, group, command-substitution,
process-substitution, parameter ($x, ${x} only), test ([[ ]]), ansi-c-quote ($'..'),
locale-quote ($".."), glob, brace, coproc, background (&), declare (declare, typeset, local,
export, readonly), array (a=(..), a+=x, a[i]=x). Every simple command in or around a named
construct must still be allowed by a rule that names it. These are never allowed by any rule:
line-continuation (a backslash-newline anywhere: bash and the parser may join it differently),
invalid-utf8 (bytes that are not UTF-8, or U+FFFD, which decoding puts in their place),
control-character (NUL, CR, ESC, ...), parameter-operator (${x@P}, ${x:=v}, ${!x}, ${x/a/b},
${#x}, ...), arithmetic ((( )), $(( )), let, for (( )), [[ -eq ]], a[$i] subscripts, test -v
'a[i]': bash evaluates a variable's value there, and a[$(cmd)] in it runs cmd), fd-variable
({fd}>f) and network-redirect (/dev/tcp, /dev/udp).

An allow rule also never matches a command that writes to a file through a redirection (> f,
time -o f), has a word only known at run time ($VAR, $(cmd), a glob, xargs input), runs in
another directory (env -C, find -execdir), or assigns a name other than a few harmless ones
(CGO_ENABLED, GOMAXPROCS, LANG, LC_*, TZ, TERM, NO_COLOR, CI, REPLY, ...; GOOS and GOARCH only
before go build, vet, list, env, mod and the like: go test and go run run a cross-built binary
through go_$GOOS_$GOARCH_exec from PATH) in any
way: NAME=x before a command or alone, env NAME=x, env -u NAME, a for or select variable,
read, mapfile, readarray, printf -v, getopts, unset, declare and export (HOME, PATH, GOPROXY,
GIT_DIR and the like change what runs), unless the rule says so with allow_redirects: true,
allow_expansions: true (the constructs command-substitution, process-substitution,
parameter, glob, brace and the quotings), allow_env: true, or allow_unparsable: true (a command
that does not parse, judged by its words, and only when it has none of ; & | < > $ \, a backquote or
a newline). Deny and ask rules see a computed word as matching anything, and see every command
inside every construct.

An allow rule also never matches a command that uses an option of the program it runs that
runs other programs, changes directory or writes files, unless a literal word of the pattern
that matched names it (go build -o bin/x, make -C src test) or the rule lists it in
allow_options (shell: {commands: [go build], allow_options: [-o, -coverprofile]}); judge where
such options point with a paths: inside_root deny or ask rule. One table says how each program
reads its options (getopt clusters and abbreviations for make and git; go's -flag, --flag and
-flag=v anywhere on the line, -test.flag after -args; git's global options before the
subcommand) and which it means: make -C -f -I -E and every NAME=VALUE; git -C -c --config-env
--exec-path --git-dir --work-tree --namespace -p before the subcommand, --ext-diff --textconv
--output --upload-pack --exec after it; go -exec -toolexec -vettool -overlay -modfile -ldflags
-gcflags -C -o the profiles -outputdir -fuzzcachedir -debug-*; gofmt -w -r -cpuprofile;
staticcheck -debug.*; find, sort, uniq, tree, tar, rg, file, cargo, npm, pytest likewise (the
README lists them). fr-approve lint reads the same table.

Paths: an allow rule for shell commands judges every word that may name a file (each argument,
the value of --opt=VALUE and NAME=VALUE, @FILE, what follows a short option as in -fFILE, and
for a program the option table does not know each place a value glued to an option may begin,
as in -isystem/etc; not echo's and printf's
words, nor grep's and rg's pattern) and every redirected file (< f, 3< f, $(<f), what an earlier
exec opened) as file_write paths are judged: against --root, after .., / and symlinks; every ~
form (~, ~user, ~+, ~-) is outside; / (also // and /.) is outside; /proc, /dev/fd, /dev/stdin
and a descriptor the line does not open itself (<&3) are outside; /dev/null is fine, and so are
/dev/stdout and /dev/stderr as a redirection's target; a computed word, or a relative path after
cd, is outside. A word the rule's pattern spells out (go test ./...) is the rule's to name. It
matches only when all of them lie inside the root, and never writes (a redirection, an option
that writes) into .git at any depth, an .envrc or a name holding a control character. The key
paths: says where else they may lie: paths: inside_root (the default), paths: anywhere (not
judged at all), or a list of places, inside_root and globs (paths: [inside_root, /tmp/**];
[src/**] alone allows only paths under src). protect: [globs] lists globs no path may match
(**/.git/**, **/.env). A deny or ask rule with paths: or protect: matches only commands with a
path outside the places or protected. The globs of deny and ask rules (protect:, and file:
paths) also match names as a file system that folds case and drops trailing dots and spaces
sees them (.GitHub/x, vendor./x); an allow rule's globs match exactly. fr-approve lint points at
allow rules without paths: whose meaning this changed.

file (kind file_write): doublestar globs (**) over the path relative to --root, after
resolving .. and symlinks; /absolute globs match absolute paths. A path outside the root is
never allowed, nor one into .git at any depth (hooks, config, a .git file), an .envrc, one
beginning with ~ or holding a control character. An allow rule's max_size (bytes, KB, MiB...) and max_changed_lines bound what it
allows; a deny or ask rule with bounds matches writes beyond them.

tool (kind tool_action): plugin, action, detail. route (kind route_approval): source,
target, keyword. Each is a glob or /regex/, or a list of them; a field left out matches all.

kind: names the approval kind; a rule with no kind and no matcher applies to every known
kind. An approval kind this build does not know is never allowed by such a wildcard: only a
rule naming it (kind: browser_action) can allow it. A malformed prompt is always denied.
Malformed includes a prompt nested deeper than a JSON decoder follows or cut short (a line
whose top level says "type":"approval_request" is answered even when it is not valid JSON), text
that is not UTF-8 (raw bytes, or an escaped lone surrogate such as \ud800), and a deciding field
given twice with different values or under a key in another case ("command" and "Command"):
readers could take such a prompt two ways. An undecodable question is skipped.

when: a jq expression (gojq) over the whole event; the rule matches only when it yields a
value other than false or null. A run-time error is a warning and no match.

limit: {max: N, per: session | DURATION} on an allow rule: after N allows (per fuseraft
session, or within the sliding window) the rule no longer matches and the other rules or the
default decide. With --audit the counts survive a restart: they are rebuilt from the log.

AUDIT LOG
--audit FILE appends one JSON line per decision: time, session, type, kind, summary, decision,
answer (questions), decider (rule, person, timeout, no-tty, default, malformed), typed (every
line the person typed at that prompt, in order, when one was asked), rule, part,
reason, charged (limited rules), policy (sha256 of the policy file), latencyMs, prev (the hash
of the previous line, null on the first) and hash (the sha256 of the line without this field).
'fr-approve verify-audit FILE' checks the chain and prints the last hash; keep it where the
log's writer cannot change it and pass it as --head later to notice lines cut from the end. At
start-up fr-approve checks the chain too, and refuses a broken log (exit 2) rather than rebuild
its limits from it.

EXIT STATUS
  0    the input ended; every prompt was answered
  1    --fail-on-deny and a prompt was denied; the input could not be read
  2    usage error, or a policy that is missing or invalid, or an audit log in use or cut
  3    fuseraft speaks an unsupported protocolVersion (see --any-version)
  130  interrupted

ENVIRONMENT
  NO_COLOR   no colour in prompts and diffs on the terminal
  TERM       TERM=dumb turns colour off too

EXAMPLES
  Run an orchestration unattended in CI, the policy answering its prompts through a FIFO:
    mkfifo answers
    fuseraft run --bridge -c ci.yaml "fix the failing test" < answers \
      | fr-approve --policy examples/ci-go.yaml --audit approvals.log --output answers --fail-on-deny

  Answer the prompts of a daemon's tasks, asking on this terminal when the policy says ask:
    fr-attach --task "tidy go.mod" --input answers --exit-on-result \
      | fr-approve --policy examples/cautious.yaml --output answers

  What would the policy have done with a recorded run?
    fr-approve check --policy examples/ci-go.yaml run.jsonl --format table
`
