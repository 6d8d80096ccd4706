// Command whitebox attributes the predictions of the white-box LSTMs of
// "Evaluating Attribution Methods using White-Box LSTMs" (Hao, 2020).
//
// Usage:
//
//	whitebox reproduce [-table N] [-format F] [-out DIR] [-data FILE] [-seed S]
//	whitebox attribute -net NET -method METHOD [flags] [INPUT ...]
//	whitebox attribute -model FILE -method METHOD [flags] [INPUT ...]
//	whitebox inspect -model FILE
//	whitebox generate -net NET [-n N] [-len L] [-seed S]
//	whitebox evaluate -net NET [-scores FILE] [-format F]
//	whitebox export -net NET -o FILE.safetensors|FILE.pt
//	whitebox serve [-net NET]... [-model NAME=FILE[,KEY=VALUE...]]... [-addr HOST:PORT]
//	whitebox version
//
// Run "whitebox help reproduce" or "whitebox help attribute" for the flags.
//
// Exit status, the same for every command: 0 success; 1 a failure at run
// time (an input that could not be scored, a table that could not be
// computed, an output that could not be written); 2 a usage error, found
// before anything runs (an unknown command, flag or help topic, a bad flag
// value, an unreadable or unusable data file); 130 interrupted (Ctrl-C).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/whitebox-lstm/whitebox/internal/visible"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program, with its streams as arguments for tests. It
// returns the exit status: 0 for success, 1 for a failure at run time (some
// input failed, a table could not be computed or written), 2 for a usage
// error, exitInterrupted (130) after Ctrl-C.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "attribute":
		return attribute(args[1:], stdin, stdout, stderr)
	case "reproduce":
		return reproduceCmd(args[1:], stdout, stderr)
	case "inspect":
		return inspect(args[1:], stdout, stderr)
	case "generate", "evaluate", "export":
		return groundTruth(args[0], args[1:], stdin, stdout, stderr)
	case "metrics":
		return metricsCmd(args[1:], stdout, stderr)
	case "serve":
		return serveCmd(args[1:], stdout, stderr)
	case "version":
		return version(stdout)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[1] == "attribute" {
			return attribute([]string{"-h"}, stdin, stdout, stdout)
		}
		if len(args) > 1 && args[1] == "inspect" {
			return inspect([]string{"-h"}, stdout, stdout)
		}
		if len(args) > 1 && (args[1] == "generate" || args[1] == "evaluate" || args[1] == "export") {
			return groundTruth(args[1], []string{"-h"}, stdin, stdout, stdout)
		}
		if len(args) > 1 && args[1] == "metrics" {
			return metricsCmd([]string{"-h"}, stdout, stdout)
		}
		if len(args) > 1 && args[1] == "serve" {
			return serveCmd([]string{"-h"}, stdout, stdout)
		}
		if len(args) > 1 && args[1] == "reproduce" {
			return reproduceCmd([]string{"-h"}, stdout, stdout)
		}
		if len(args) > 1 && args[1] != "version" {
			fmt.Fprintf(stderr, "whitebox: no help for %q\n", args[1])
			usage(stderr)
			return 2
		}
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "whitebox: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `whitebox: attribution methods checked against hand-built ("white-box") LSTMs

Commands:
  reproduce   recompute the paper's Tables 2-5 beside the published values
  attribute   score every input token with an attribution method
  inspect     show how a model file (PyTorch, safetensors) is read
  generate    write evaluation inputs of a network's task, one per line
  evaluate    score explanations (any tool's, or ours) against the ground truth
  export      write a white-box network or automaton as a PyTorch state_dict
  metrics     measure faithfulness metrics against the ground truth
  serve       an attribution service over HTTP (KServe V1, JSON)
  version     print the build and machine description
  help        this text ("whitebox help COMMAND" for a command's flags)

Exit status: 0 success; 1 a failure at run time (an input that could not be
scored, a table that could not be computed or written); 2 a usage error,
found before anything runs (unknown command or flag, bad flag value,
unusable data file); 130 interrupted.

Examples:
  whitebox reproduce
  whitebox attribute -net sp-counter -method ig accb
`)
}

// errText is err's message for the terminal: whatever package wrote it,
// names from files and inputs cannot send escape sequences to it.
func errText(err error) string { return visible.String(err.Error()) }

// parseFlags parses a command's flags. When it returns ok = false the
// command ends with status: 0 after -h, 2 for a bad flag (already reported).
func parseFlags(fs *flag.FlagSet, args []string) (status int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if err := emptyFlag(fs); err != nil {
		fmt.Fprintf(fs.Output(), "%s: %v\n", fs.Name(), err)
		return 2, false
	}
	return 0, true
}

// parseFlagsOnly is parseFlags for a command that takes no positional
// arguments: one is a usage error, reported on fs's output.
func parseFlagsOnly(fs *flag.FlagSet, args []string) (status int, ok bool) {
	if status, ok := parseFlags(fs, args); !ok {
		return status, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2, false
	}
	return 0, true
}
