package approve

const description = `fr-approve reads fuseraft events (stdin, or --input) and writes exactly one approval_response for
each approval_request and one question_response for each question, in order (stdout, or
--output). Responses are sent whenever the input has no whole line left to decide, and before a
person is asked anything: on a live stream, where the next prompt waits for its answer, each goes
the moment it is decided; a recorded stream is answered in blocks, at full speed. Every other
event, and every line that is not JSON, is ignored. The protocolVersion of ready and hello
events is checked.

A policy decides each prompt: allow, deny, or ask a person. Asking happens on the terminal
(/dev/tty, or --tty), never on stdin or stdout: a one-line summary and the policy's reason (file
writes as a unified diff, coloured unless NO_COLOR, cut to fit the screen), then "allow? [y/N]",
as fr-attach asks it; where more than those lines was shown, the summary and the reason are said
again right above the question. Each answer is a line (then Enter): y or yes allows; n, no or an
empty line denies; d or diff shows a file write's whole diff in $PAGER (else less) and asks
again; anything else answers nothing and is asked again; the answer is then shown (✓ approved,
✗ denied). With no terminal, or no answer within --ask-timeout (counted from when
the prompt was first shown), the prompt is denied and recorded as no-tty or timeout, never as a
person's answer.

Every decision is bounded. Patterns are matched in time linear in the command, whatever their
number of **; a decision that runs past --decision-timeout (10s; deciding takes microseconds),
or fails with an internal error, denies that prompt (a question is skipped), recorded with
decider error and the reason, and fr-approve goes on with the next prompt. A decision that does
not come back (a file system that hangs) is denied a quarter of the timeout later all the same,
and its own answer dropped if it ever comes.

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

Options are an allow-list. For each program it knows, one table lists the options known to be
harmless (they read, print or choose what is shown: no program run, no other directory, no
write, no symbolic link followed out of the tree) and which of them take a value. An allow rule
never matches a command using any other option (a cluster letter, a long name, an abbreviation
of one, a plugin's option such as pytest --cov-report or --html), unless a literal word of the
pattern that matched names it (go build -o bin/x) or the rule lists it in allow_options
(shell: {commands: [go build], allow_options: [-o, -coverprofile]}, spelled as the command
writes it); judge where such options point with a paths: inside_root rule. For a program the
table does not know, every word that looks like an option needs naming so. Each program's
options are read as it reads them: getopt clusters (-iFf FILE; the value glued to the letter
that takes it starts after that letter), --name=v and --name v, -- ending the options (cargo
test -- and go test -args hand the rest to the test binary, read with its own table); go's
-flag, --flag and -flag=v anywhere on the line; git's global options before the subcommand and
each subcommand's own after it. Known: ls, cat, head, tail, wc, grep, rg, sort, uniq, diff, tree,
file, stat, du, df, find, test, [, echo, printf, read, pwd, which, make, tar, git (status, diff,
log, show, blame, rev-parse, ls-files, branch), go (build, test, vet, list, env, version, mod
tidy/download/verify/graph/why), gofmt, staticcheck, cargo (build, check, test), npm (test,
run), pytest and python -m pytest; a subcommand not listed knows no option. fr-approve lint
reads the same table, and points at allow patterns of programs it does not know. Deny and ask
rules never look at it: an option they do not know never stops them from matching.

Paths: an allow rule for shell commands judges every word that may name a file (each argument,
the value of --opt=VALUE and NAME=VALUE, @FILE, a value glued to the short option that takes it
as the program reads it (-iFfFILE), and, where the option table cannot tell (a letter or a
program it does not know, as in -isystem/etc), each place a value may begin; not echo's and
printf's words, nor grep's and rg's pattern) and every redirected file (< f, 3< f, $(<f), what an earlier
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
target, keyword. Each is a glob or /regex/, or a list of them; a field left out matches all. A
detail holding a line break or another control character never matches an allow rule's detail
pattern, and one holding more than one URL, or a URL and other words, never matches an allow
pattern written for a URL (one that spells ://).

kind: names the approval kind; a rule with no kind and no matcher applies to every known
kind. An approval kind this build does not know is never allowed by such a wildcard: only a
rule naming it (kind: browser_action) can allow it. A malformed prompt is always denied.
Malformed includes a prompt nested deeper than a JSON decoder follows or cut short (a line
whose top level says "type":"approval_request" is answered even when it is not valid JSON), text
that is not UTF-8 (raw bytes, or an escaped lone surrogate such as \ud800), and a deciding field
given twice with different values or under a key in another case ("command" and "Command"):
readers could take such a prompt two ways. An undecodable question is skipped.

when: a jq expression (gojq) over the whole event; the rule matches only when it yields a
value other than false or null. Conditions fail closed: one that errors (a field the prompt
lacks, .detail | fromjson on text that is not JSON, split(" ")[1] of a one-word command) or
runs past its bound (10 million jq steps, or 2s, for all the conditions of a prompt together)
counts as a match for a deny or ask rule and as no match for an allow rule, with a warning and
the error in the decision's reason. Give a field that may be missing a default (.detail // "")
or catch the error (try ... catch false); fr-approve lint tries each condition on prompts with
fields left out, null, empty or of one word, and warns about those that fail.

limit: {max: N, per: session | DURATION} on an allow rule: after N allows (per fuseraft
session, or within the sliding window) the rule no longer matches and the other rules or the
default decide. With --audit the counts survive a restart: they are rebuilt from the log.

AUDIT LOG
--audit FILE appends one JSON line per decision: time, session, type, kind, summary, decision,
answer (questions), decider (rule, person, timeout, no-tty, default, malformed, error), typed (every
line the person typed at that prompt, in order, when one was asked), rule, part,
reason, charged (limited rules), policy (sha256 of the policy file), latencyMs, prev (the hash
of the previous line, null on the first) and hash (the sha256 of the line without this field).
'fr-approve verify-audit FILE' checks the chain and prints the last hash; keep it where the
log's writer cannot change it and pass it as --head later to notice lines cut from the end. At
start-up fr-approve checks the chain too, and refuses a broken log (exit 2) rather than rebuild
its limits from it.

A decision's line is written before its answer is sent, so every answer the log does not hold
is a refusal. When a line cannot be written (a full disk), the part written is cut off again, so
the log still verifies; that prompt is denied (a question answered null), unrecorded and said so
on stderr, the answers already logged are sent, and fr-approve stops (exit 1): free space and
start it again on the same log. --audit-fsync also flushes each line to the disk before its
answer, so a crash cannot lose a line whose answer went out; it costs a disk wait per prompt.
A log left ending in a torn line (a crash, or a disk that would not even let the part be cut
off) is refused at start-up (exit 2) with a pointer at 'fr-approve repair-audit FILE', which
saves the torn bytes beside the log, cuts them, and records the cut as a line of the chain.

ENVIRONMENT
  NO_COLOR   no colour in prompts and diffs on the terminal
  PAGER      what d at a prompt shows a file write's whole diff in (else less)
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
