package main

import (
	"flag"
	"strings"

	"github.com/whitebox-lstm/whitebox/reproduce"
	"github.com/whitebox-lstm/whitebox/score"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// An explicit value is used as given or refused, never replaced by the
// default (README, "Every flag and option"): a string flag given empty
// (-head "", -span=) is a usage error naming the flag and what it takes,
// in every command, as no flag takes "" as a value.

// valueHints say what a command's string flags take where attribute's
// (score.ValueHint) do not say it, or say it otherwise.
var valueHints = map[string]map[string]string{
	"whitebox attribute": {"format": "json, text, html or latex"},
	"whitebox inspect":   {"head": "hn, hn-bf, last, mean or max"},
	"whitebox evaluate": {
		"scores": `a file of JSON lines {"input": ..., "scores": [...]}, or - for standard input`,
		"class":  "a class by name or by index from 0",
		"format": "text, json, markdown or html",
		"len":    "a length L or a range MIN..MAX",
	},
	"whitebox generate": {"len": "a length L or a range MIN..MAX"},
	"whitebox export": {
		"dfa": `a JSON automaton file {"alphabet", "delta", "classes", "class_of"}`,
		"o":   "FILE.safetensors or FILE.pt",
	},
	"whitebox reproduce": {
		"format": strings.Join(reproduce.Formats(), ", "),
		"out":    "a directory",
		"data":   "a data file",
	},
	"whitebox serve": {
		"net":        "a network (" + strings.Join(whitebox.Names(), ", ") + ") or NAME=NETWORK[,m=M,u=U,k=K]",
		"model":      "NAME=FILE[,KEY=VALUE...]",
		"addr":       "HOST:PORT (e.g. 127.0.0.1:8080)",
		"max-body":   "a size such as 1MiB",
		"token-file": "a file holding the bearer token",
	},
	"whitebox metrics": {
		"net":    "networks, comma-separated (" + strings.Join(whitebox.Names(), ", ") + "), or all",
		"format": "text or markdown",
		"len":    "a length L or a range MIN..MAX",
	},
}

// emptyFlag returns the error of the first flag fs saw given an empty
// value, or nil.
func emptyFlag(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(fl *flag.Flag) {
		if err != nil || fl.Value.String() != "" {
			return
		}
		hint, ok := valueHints[fs.Name()][fl.Name]
		if !ok {
			hint = score.ValueHint(fl.Name)
		}
		err = score.EmptyValue(fl.Name, hint)
	})
	return err
}
