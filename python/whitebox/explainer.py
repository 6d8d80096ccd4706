"""whitebox.Explainer: exact attributions of a live PyTorch classifier.

The module's weights go into a temporary .safetensors file, the module
itself is run on a few probe inputs to record its logits, and `whitebox
serve -head auto -verify` is started on them: the server refuses to start
unless one of its heads reproduces the module's logits, so what is
attributed is proved to be the module. Requests then go to that server
over loopback; each record is the one `whitebox attribute -format json`
writes for the same file and options.
"""

import atexit
import http.client
import json
import os
import shutil
import subprocess
import tempfile
import threading
import weakref

import torch
from torch import nn

from ._binary import WhiteboxError, find_binary
from ._safetensors import write as write_safetensors


class VerificationError(WhiteboxError):
    """The module's forward is not one whitebox computes: no head of an
    Embedding -> LSTM/GRU -> head -> classifier stack reproduces its logits
    on the probes (the message names the worst probe and difference)."""


class ServerError(WhiteboxError):
    """A request the server refused or failed, with its message and status."""

    def __init__(self, status, message):
        super().__init__("%d: %s" % (status, message))
        self.status, self.message = status, message


# The layers whitebox reads; containers and parameterless activations may
# wrap them. Anything else with parameters is refused by name.
_READ = (nn.Embedding, nn.LSTM, nn.GRU, nn.Linear)
_FREE = (nn.Sequential, nn.ModuleList, nn.ModuleDict, nn.ReLU, nn.Tanh, nn.Dropout, nn.Identity)


def _check_structure(module):
    """The module's Embedding and recurrent layer; refuses what whitebox
    cannot read, naming the part."""
    embeddings, recurrent = [], []
    for name, m in module.named_modules():
        if isinstance(m, nn.Embedding):
            embeddings.append((name, m))
        elif isinstance(m, (nn.LSTM, nn.GRU)):
            recurrent.append((name, m))
        elif isinstance(m, nn.RNNBase):
            raise WhiteboxError("%s (%s): whitebox reads nn.LSTM and nn.GRU layers, not %s" % (name, type(m).__name__, type(m).__name__))
        elif not isinstance(m, _READ + _FREE) and m is not module and any(True for _ in m.parameters(recurse=False)):
            raise WhiteboxError("%s (%s) holds parameters whitebox does not read: a classifier must be "
                                "Embedding -> LSTM/GRU -> head (hn, last, mean, max, attention) -> Linear "
                                "(or Linear -> ReLU/Tanh -> Linear)" % (name, type(m).__name__))
    if len(embeddings) != 1:
        raise WhiteboxError("the module has %d nn.Embedding layers (%s); whitebox reads one" %
                            (len(embeddings), ", ".join(n for n, _ in embeddings) or "none"))
    if len(recurrent) != 1:
        raise WhiteboxError("the module has %d nn.LSTM/nn.GRU layers (%s); whitebox reads one (with num_layers for a stack)" %
                            (len(recurrent), ", ".join(n for n, _ in recurrent) or "none"))
    return embeddings[0][1], recurrent[0][1]


def default_probe(vocab, lengths=(1, 3, 7, 12), seed=0):
    """A few id sequences of the given lengths, random but the same each time."""
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, vocab, (n,), generator=g).tolist() for n in lengths]


def _rows(ids):
    """ids as a list of id lists, and whether the caller gave a batch and
    whether the scores can be stacked."""
    if isinstance(ids, torch.Tensor):
        if ids.dtype.is_floating_point:
            raise TypeError("ids must be integer token ids, not %s" % ids.dtype)
        if ids.dim() == 1:
            return [ids.tolist()], False
        if ids.dim() == 2:
            return ids.tolist(), True
        raise ValueError("ids must be 1-D (tokens) or 2-D (batch, tokens), not %d-D" % ids.dim())
    ids = list(ids)
    if ids and isinstance(ids[0], (list, tuple, torch.Tensor)):
        return [[int(v) for v in row] for row in ids], True
    return [[int(v) for v in ids]], False


def _stop(proc, tmp):
    """Ends a server process (closing its standard input shuts it down;
    then a signal, then a kill) and removes its files."""
    try:
        if proc.poll() is None:
            try:
                proc.stdin.close()  # -stdin-eof: the server shuts down
            except OSError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if proc.stdin and not proc.stdin.closed:
            proc.stdin.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _drain(stream):
    with stream:
        for _ in stream:
            pass


class Explainer:
    """Attributions of `module`, an nn.Module whose forward maps token ids
    (batch, tokens) to logits (batch, classes) through one nn.Embedding,
    one nn.LSTM or nn.GRU (stacked, bidirectional), a head (h_n, the last
    step, the mean or max over steps, or attention pooling) and a
    classifier (Linear, or Linear -> ReLU/Tanh -> Linear).

    probe: id sequences the module is run on to prove that whitebox
    computes its function (default: default_probe). The module is run as
    it is: a module left in train mode with dropout fails the check.
    One `whitebox serve` process serves the Explainer until close() (or
    the end of a `with` block, or garbage collection, or the interpreter's
    exit); it also ends if this process dies (it reads its standard input).
    """

    def __init__(self, module, probe=None, binary=None, timeout=120):
        if not isinstance(module, nn.Module):
            raise TypeError("module must be a torch.nn.Module, not %s" % type(module).__name__)
        embedding, _ = _check_structure(module)
        self.vocab = embedding.num_embeddings
        binary = binary or find_binary()
        tmp = tempfile.mkdtemp(prefix="whitebox-")
        try:
            self.path = os.path.join(tmp, "model.safetensors")
            write_safetensors(self.path, module.state_dict(), {"format": "pt"})
            probe = probe if probe is not None else default_probe(self.vocab)
            self.verify = verify = os.path.join(tmp, "probe.jsonl")
            with open(verify, "w") as f, torch.no_grad():
                for ids in probe:
                    ids = [int(v) for v in ids]
                    logits = module(torch.tensor([ids]))
                    f.write(json.dumps({"ids": ids, "logits": [float(v) for v in logits.reshape(-1)]}) + "\n")
            self.proc = subprocess.Popen(
                [binary, "serve", "-addr", "127.0.0.1:0", "-stdin-eof",
                 "-model", "m=%s,head=auto,verify=%s" % (self.path, verify)],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self._finalize = weakref.finalize(self, _stop, self.proc, tmp)
        atexit.register(self._finalize)
        self.addr = self._await_listening(timeout)
        self._lock = threading.Lock()
        info = self._call("GET", "/v1/models/m")
        self.head, self.classes, self.layers = info["head"], info["classes"], info["layers"]

    def _await_listening(self, timeout):
        lines = []
        timer = threading.Timer(timeout, self.proc.kill)  # a start that hangs
        timer.start()
        try:
            for line in self.proc.stderr:
                lines.append(line.rstrip("\n"))
                if "listening on http://" in line:
                    addr = line.split("listening on http://", 1)[1].split()[0]
                    # The rest of stderr (logs) is drained so that the pipe
                    # never fills (by a function that holds no reference to
                    # self, so that garbage collection can end the server).
                    threading.Thread(target=_drain, args=(self.proc.stderr,), daemon=True).start()
                    return addr
        finally:
            timer.cancel()
        self.proc.wait()
        self.proc.stderr.close()
        msg = "\n".join(lines) or "whitebox serve exited with status %d" % self.proc.returncode
        self.close()
        if "verify" in msg or "head" in msg:
            raise VerificationError(msg)
        raise WhiteboxError(msg)

    def close(self):
        """Stops the server; the Explainer cannot be used afterwards."""
        self._finalize()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def pid(self):
        return self.proc.pid

    def _call(self, verb, path, body=None, accept=None):
        if not self._finalize.alive:
            raise WhiteboxError("the Explainer is closed")
        host, port = self.addr.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port))
        try:
            headers = {"Content-Type": "application/json"}
            if accept:
                headers["Accept"] = accept
            conn.request(verb, path, body=None if body is None else json.dumps(body), headers=headers)
            resp = conn.getresponse()
            data = resp.read().decode()
        except KeyboardInterrupt:
            conn.close()  # the server sees the client gone and stops the work
            raise
        finally:
            conn.close()
        if resp.status != 200:
            try:
                msg = json.loads(data)["error"]
            except (ValueError, KeyError):
                msg = data.strip()
            raise ServerError(resp.status, msg)
        if accept == "application/x-ndjson":
            lines = data.splitlines()
            for line in lines:
                rec = json.loads(line)
                if "error" in rec and "status" in rec:  # a stream's failure, after its first records
                    raise ServerError(rec["status"], rec["error"])
            return lines
        return json.loads(data)

    def records(self, rows, **parameters):
        """The records (JSON lines, as `whitebox attribute -format json`
        writes them) of the id sequences rows, in one request."""
        return self._call("POST", "/v1/models/m:explain",
                          {"instances": rows, "parameters": parameters}, accept="application/x-ndjson")

    def attribute(self, ids, method="ig", target=None, return_record=False, **parameters):
        """The token scores (float64) of method for ids: a list or 1-D
        tensor (T,), or a batch, a (B, T) tensor or a list of lists (one
        request; a (B, T) tensor, or a list of tensors for rows of
        different lengths). target: None (the predicted class), a class
        index or name, a list of them (one per row), or "all" (scores
        (C, T) per row). parameters are the server's (steps, baseline,
        quadrature, eps, lrp_bias, ...); baseline may be a token id. With
        return_record, also the records (dicts: logits, prediction,
        delta, attention, ...)."""
        rows, batch = _rows(ids)
        params = {"method": method}
        for k, v in parameters.items():
            params[k] = "id:%d" % v if k == "baseline" and isinstance(v, int) else v
        if isinstance(target, (list, tuple)):
            if len(target) != len(rows):
                raise ValueError("%d targets for %d rows" % (len(target), len(rows)))
            lines = []
            for row, t in zip(rows, target):
                lines += self.records([row], **dict(params, **{"class": str(t)}))
        else:
            if target is not None:
                params["class"] = str(target)
            lines = self.records(rows, **params)
        recs = [json.loads(line) for line in lines]
        scores = [torch.tensor(r["scores"], dtype=torch.float64) for r in recs]
        if batch:
            out = torch.stack(scores) if len({s.shape for s in scores}) == 1 else scores
        else:
            out = scores[0]
        return (out, recs) if return_record else out
