// Package docexamples holds only tests: of the examples of README.md, docs/ and demo/run.sh.
// Every ```sh block of the cookbook is extracted under its recipe's heading, and every one of
// the README and the other pages of docs/ by the name its mark gives it (or it says why it
// cannot run here); each is run with bash by a script in testdata/script against fr-sim, and
// the demo is run end to end, so an example or a demo that stops being true fails the build.
package docexamples
