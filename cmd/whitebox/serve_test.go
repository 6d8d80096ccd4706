package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServe: whitebox serve answers :explain with the bytes of whitebox
// attribute for the same model flags and options, and SIGTERM ends it
// with status 0.
func TestServe(t *testing.T) {
	addrc := make(chan string, 1)
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- serve(context.Background(), []string{"-addr", "127.0.0.1:0", "-net", "sp-fsa",
			"-model", "bi=../../model/testdata/bi2.safetensors,head=mean,pad=0"}, &stderr, func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case code := <-done:
		t.Fatalf("serve ended with %d: %s", code, stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("serve did not start")
	}
	for _, c := range []struct {
		model, body string
		args        []string
	}{
		{"sp-fsa", `{"instances":["aacb"],"parameters":{"method":"lrp"}}`, []string{"-net", "sp-fsa", "-method", "lrp", "aacb"}},
		{"bi", `{"instances":[[3,14,15,0,0]],"parameters":{"method":"ig","steps":"auto","class":"2"}}`,
			[]string{"-model", "../../model/testdata/bi2.safetensors", "-head", "mean", "-pad", "0", "-method", "ig", "-steps", "auto", "-class", "2", "3 14 15 0 0"}},
	} {
		var want, errOut bytes.Buffer
		if code := run(append([]string{"attribute"}, c.args...), strings.NewReader(""), &want, &errOut); code != 0 {
			t.Fatalf("attribute %v: %d %s", c.args, code, errOut.String())
		}
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/models/"+c.model+":explain", strings.NewReader(c.body))
		req.Header.Set("Accept", "application/x-ndjson")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(got) != want.String() {
			t.Errorf("%s %s: %d\n%s\nwant (whitebox attribute %v)\n%s", c.model, c.body, resp.StatusCode, got, c.args, want.String())
		}
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(stderr.String(), "whitebox serve: stopped") {
			t.Errorf("after SIGTERM: status %d, stderr %s", code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("SIGTERM did not stop serve")
	}
}

// TestServeUsage: bad flags are usage errors (status 2) that say why.
func TestServeUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{nil, "no model: give -net NAME or -model NAME=FILE"},
		{[]string{"-model", "x.pt"}, `-model "x.pt": want NAME=FILE`},
		{[]string{"-model", "m=../../model/testdata/bi2.safetensors,hed=mean"}, `"hed=mean" is not KEY=VALUE`},
		{[]string{"-model", "m=../../model/testdata/bi2.safetensors,head=sideways"}, "model m: -head"},
		{[]string{"-model", "m=/nonexistent.pt"}, "model m: "},
		{[]string{"-net", "sp-fsa", "-net", "sp-fsa"}, `model "sp-fsa": named twice`},
		{[]string{"-net", "nope"}, "model nope: "},
		{[]string{"-net", "a/b=sp-fsa"}, `model name "a/b"`},
		{[]string{"-net", "sp-fsa,m=x"}, `m="x" is not a number`},
		{[]string{"-net", "sp-fsa", "-token-file", "/nonexistent"}, "-token-file"},
		{[]string{"-net", "sp-fsa", "stray"}, `unexpected argument "stray"`},
	} {
		var stderr bytes.Buffer
		code := serve(context.Background(), c.args, &stderr, func(string) { t.Errorf("%v: serve started", c.args) })
		if code != 2 || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("serve %v: status %d, stderr %q, want 2 with %q", c.args, code, stderr.String(), c.msg)
		}
	}
}
