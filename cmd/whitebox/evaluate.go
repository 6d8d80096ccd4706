package main

import "io"

func evaluateCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int { return 2 }
