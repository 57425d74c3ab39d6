package sim

const description = `fr-sim answers the same command lines as fuseraft by playing a scenario: a YAML file
describing what each REPL turn, orchestration run and daemon task emits, which approval
prompts it raises and what happens on allow and on deny. With no --scenario the embedded
default plays (print it with 'fr-sim scenario'; the resource queries' data with
'fr-sim dataset'). Point fr at it with FUSERAFT_BIN=fr-sim or --fuseraft fr-sim. See
docs/fr-sim.md for the scenario and dataset formats.

Commands take fuseraft's own arguments: repl --vscode, run --bridge, serve, and the --json
resource queries (sessions, memory, context, schedule, plugins, models, config, validate,
init). Global options go before the command, or in the environment, so a program that runs
"fuseraft" with fixed arguments can still set them.

FAULTS
   Each fault knob is a flag, an entry of $FRSIM_FAULTS / --faults, or a scenario setting:
   dotnet, crlf, noise[=EVERY], split[=BYTES[/PAUSE]], version=N, unknown-kind[=NAME],
   big[=BYTES], crash[=AFTER], flood=N.

ENVIRONMENT
   FRSIM_SCENARIO             scenario file (as --scenario)
   FRSIM_RECORD               input record file (as --record)
   FRSIM_FAULTS               fault list, e.g. "dotnet,crlf,noise" (as --faults)
   FRSIM_PACE                 delay multiplier; 0 for none (as --pace)
   FUSERAFT_VSCODE_QUESTIONS  1 lets repl --vscode ask question prompts
   FUSERAFT_SERVE_TOKEN       bearer token of serve
   FRSIM_STATE                the queries' dataset: a JSON file shaped like 'fr-sim dataset'
   FRSIM_UNCONFIGURED         1: models, repl and run fail as fuseraft does when not configured
   FRSIM_ITEMS                sessions --json lists this many generated sessions, streamed
   FRSIM_NOW                  the queries' clock (RFC 3339), which decides a schedule's due
   FRSIM_STDERR               a diagnostic line the queries write to stderr
   FRSIM_KILL                 the queries write half an envelope, then die of this signal

EXAMPLES
   A chat, streamed:
      printf 'hello\n' | fr-sim repl --vscode --no-banner

   Every stdout line of a .NET-style run with noise, and what the client sent:
      printf '{"type":"approval_response","approved":true}\n' |
        fr-sim --dotnet --noise --record sent.jsonl run --bridge -c team.yaml "fix the parser"
      cat sent.jsonl

   The toolkit against the simulator, with fuseraft's rough edges on:
      export FUSERAFT_BIN=fr-sim FRSIM_FAULTS=dotnet,crlf,noise
      fr-ls sessions`
