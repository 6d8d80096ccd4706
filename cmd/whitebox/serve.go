package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/whitebox-lstm/whitebox/score"
	"github.com/whitebox-lstm/whitebox/server"
)

// specList is a repeated flag's values.
type specList []string

func (l *specList) String() string     { return strings.Join(*l, " ") }
func (l *specList) Set(v string) error { *l = append(*l, v); return nil }

// serveCmd is "whitebox serve": the attribution service (package server)
// on -addr until SIGTERM or SIGINT.
func serveCmd(args []string, stdout, stderr io.Writer) int {
	return serve(context.Background(), args, stderr, nil)
}

// serve runs the service until ctx ends or a signal comes; ready, when not
// nil, receives the address it listens on (tests).
func serve(ctx context.Context, args []string, stderr io.Writer, ready func(addr string)) int {
	fs := flag.NewFlagSet("whitebox serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var nets, models specList
	fs.Var(&nets, "net", "a white-box network to serve, named by itself (sp-fsa) or NAME=NETWORK[,m=M,u=U,k=K]; repeatable")
	fs.Var(&models, "model", "a model to serve: NAME=FILE[,head=H,act=A,verify=FILE,vocab=FILE,unk=TOKEN,classes=FILE,pad=ID,embedding=N,lstm=N,decoder=N,attention=N] (the attribute flags of the same names); repeatable")
	addr := fs.String("addr", "127.0.0.1:8080", "the address to listen on (loopback by default; another needs care: see -token-file)")
	budget := fs.String("budget", server.DefaultBudget, "the memory of every request in flight together: half for the engines, half for the requests' bodies, instances and held responses (each running request gets -budget / -workers / 2 of each)")
	workers := fs.Int("workers", 0, "requests that run at once (default: the number of cores); the cores are shared among them")
	queue := fs.Int("queue", server.DefaultQueue, "requests that may wait for one of -workers; one more is answered 503 with Retry-After")
	clientLimit := fs.Int("client-limit", 0, "the most requests one client address may have running or waiting (more: 429 with Retry-After); 0: no limit (on loopback every client has one address)")
	maxBody := fs.String("max-body", "1MiB", "the largest request body (more: 413)")
	maxInstances := fs.Int("max-instances", server.DefaultMaxInstances, "the most instances of one request (more: 413)")
	maxTokens := fs.Int("max-tokens", server.DefaultMaxTokens, "the most tokens of one instance (more: 413)")
	maxSteps := fs.Int("max-steps", server.DefaultMaxSteps, "the most IG steps (steps, max_steps) a request may ask for (more: 400)")
	timeout := fs.Duration("timeout", server.DefaultTimeout, "a request's deadline (a request's parameters.timeout may shorten it): then its work stops (504)")
	grace := fs.Duration("grace", 30*time.Second, "on SIGTERM or SIGINT, the time the requests in flight have to finish")
	stdinEOF := fs.Bool("stdin-eof", false, "also shut down when standard input reaches its end: a parent process that holds the other end of a pipe, and ends even when killed, ends the server (the Python client)")
	tokenFile := fs.String("token-file", "", "a file holding a bearer token that every request but /healthz and /readyz must carry (Authorization: Bearer TOKEN)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox serve [-net NET]... [-model NAME=FILE[,KEY=VALUE...]]... [flags]

Serves the models given (KServe V1 over HTTP, JSON only) until SIGTERM or
SIGINT, then finishes the requests in flight (within -grace) and exits 0:

  GET  /v1/models                 the models' names
  GET  /v1/models/NAME            a model's metadata
  POST /v1/models/NAME:predict    {"instances": [...]}: logits, predicted classes
  POST /v1/models/NAME:explain    {"instances": [...], "parameters": {"method": "ig", ...}}:
                                  the records of whitebox attribute -format json
  GET  /healthz, /readyz, /metrics (Prometheus)

An instance is a string (an input line of whitebox attribute), an array of
token ids or of tokens (with vocab=), or an array of feature rows. Every
request shares one pool of cores and one -budget; see docs/server.md.

Exit status: 0 after a shutdown (requests still running at the end of
-grace are cut off, and it says how many); 1 the address cannot be
listened on; 2 a usage error (bad flag, unreadable model).

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseFlagsOnly(fs, args); !ok {
		return status
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "whitebox serve: "+format+"\n", a...)
		return 2
	}
	var specs []server.Model
	for _, n := range nets {
		m, err := server.ParseNet(n)
		if err != nil {
			return usageErr("%s", errText(err))
		}
		specs = append(specs, m)
	}
	for _, v := range models {
		m, err := server.ParseModel(v)
		if err != nil {
			return usageErr("%s", errText(err))
		}
		specs = append(specs, m)
	}
	body, err := score.ParseSize(*maxBody)
	if err != nil {
		return usageErr("-max-body: %v", err)
	}
	if *timeout <= 0 || *grace < 0 {
		return usageErr("-timeout must be positive and -grace not negative")
	}
	if *clientLimit < 0 {
		return usageErr("-client-limit %d must not be negative", *clientLimit)
	}
	opt := server.Options{Models: specs, Budget: *budget, Workers: *workers, Queue: *queue, MaxBody: body, ClientLimit: *clientLimit,
		MaxInstances: *maxInstances, MaxTokens: *maxTokens, MaxSteps: *maxSteps, Timeout: *timeout,
		Log: log.New(stderr, "whitebox serve: ", log.LstdFlags)}
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return usageErr("-token-file: %v", err)
		}
		if opt.Token = strings.TrimSpace(string(b)); opt.Token == "" || strings.ContainsAny(opt.Token, " \t\r\n") {
			return usageErr("-token-file %s: want one token, without white space", *tokenFile)
		}
	}
	srv, err := server.New(opt)
	if err != nil {
		return usageErr("%s", errText(err))
	}
	limitServeMemory(*budget)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "whitebox serve: %v\n", err)
		return 1
	}
	if !loopback(ln.Addr()) && opt.Token == "" {
		fmt.Fprintf(stderr, "whitebox serve: warning: listening on %s, beyond this machine, without -token-file: anyone who reaches it may use it\n", ln.Addr())
	}
	fmt.Fprintf(stderr, "whitebox serve: listening on http://%s (models: %s)\n", ln.Addr(), strings.Join(srv.Models(), ", "))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *stdinEOF {
		go func() {
			io.Copy(io.Discard, os.Stdin)
			stop()
		}()
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	if err := srv.Serve(ctx, ln, *grace); err != nil {
		var cut *server.CutOff
		if errors.As(err, &cut) { // a shutdown all the same: exit 0
			fmt.Fprintf(stderr, "whitebox serve: stopped: %v\n", err)
			return 0
		}
		fmt.Fprintf(stderr, "whitebox serve: %v\n", err)
		return 1
	}
	fmt.Fprintln(stderr, "whitebox serve: stopped")
	return 0
}

// loopback reports whether a listener's address is on this machine only.
func loopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// limitServeMemory sets the Go runtime's soft memory limit (unless
// GOMEMLIMIT is set) to the process's size once its models are loaded,
// plus -budget and score.MemoryOverhead: what docs/server.md promises.
func limitServeMemory(budget string) {
	b, err := score.ParseSize(budget)
	if err != nil || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	debug.SetMemoryLimit(int64(ms.Sys-ms.HeapReleased) + b + score.MemoryOverhead)
}
