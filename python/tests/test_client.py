"""Tests of the Python client against float64 autograd references written
here, against the CLI's bytes, and against modules it must refuse.

Run from python/: WHITEBOX_BIN=/path/to/whitebox python3 -m unittest discover -s tests -v
(the whitebox binary: go build -o /path/to/whitebox ./cmd/whitebox)."""

import copy
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError:  # pragma: no cover
    torch = None

if torch is not None:
    import whitebox
    from whitebox import captum

    class Classifier(nn.Module):
        """Embedding -> LSTM/GRU -> head -> Linear or Sequential classifier."""

        def __init__(self, kind="lstm", bi=False, layers=1, head="hn", classifier="linear", vocab=30, dim=6,
                     hidden=5, classes=3, seed=0):
            super().__init__()
            torch.manual_seed(seed)
            self.kind, self.bi, self.head = kind, bi, head
            self.embedding = nn.Embedding(vocab, dim)
            rnn = nn.LSTM if kind == "lstm" else nn.GRU
            self.rnn = rnn(dim, hidden, num_layers=layers, bidirectional=bi, batch_first=True)
            d = hidden * (2 if bi else 1)
            if head == "attention":
                self.attention = nn.Linear(d, 1)
            if classifier == "linear":
                self.fc = nn.Linear(d, classes)
            else:
                self.classifier = nn.Sequential(nn.Linear(d, 7), nn.Tanh() if classifier == "tanh" else nn.ReLU(),
                                                nn.Linear(7, classes))
            with torch.no_grad():
                for p in self.parameters():
                    p.mul_(2)  # livelier gates

        def from_embedded(self, e):
            out, h = self.rnn(e)
            h_n = h[0] if isinstance(h, tuple) else h
            if self.head == "hn":
                v = torch.cat((h_n[-2], h_n[-1]), dim=-1) if self.bi else h_n[-1]
            elif self.head == "last":
                v = out[:, -1]
            elif self.head == "mean":
                v = out.mean(dim=1)
            elif self.head == "max":
                v = out.max(dim=1).values
            elif self.head == "attention":
                alpha = torch.softmax(self.attention(out), dim=1)
                v = (alpha * out).sum(dim=1)
            else:
                raise ValueError(self.head)
            return self.fc(v) if hasattr(self, "fc") else self.classifier(v)

        def forward(self, ids):
            return self.from_embedded(self.embedding(ids))

    CASES = [
        dict(kind="lstm", head="hn"),
        dict(kind="lstm", bi=True, layers=2, head="max", classifier="relu"),
        dict(kind="gru", head="hn", layers=2),
        dict(kind="gru", bi=True, head="mean", classifier="tanh"),
        dict(kind="lstm", bi=True, head="attention"),
        dict(kind="gru", head="attention", classifier="relu"),
        dict(kind="lstm", bi=True, head="last", classifier="tanh"),
        dict(kind="gru", bi=True, layers=2, head="hn"),
    ]

    def references(module, ids, cls=None, steps=50):
        """float64 autograd: saliency, G x I and IG (Gauss-Legendre, the
        step sizes rounded to float32 as Captum does) of class cls
        (None: the predicted one) on the embedded input."""
        m = copy.deepcopy(module).double().eval()
        e = m.embedding(torch.tensor([ids])).detach()[0]
        with torch.no_grad():
            logits = m.from_embedded(e[None])[0]
        c = int(torch.argmax(logits)) if cls is None else cls
        x = e.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(m.from_embedded(x[None])[0, c], x)
        nodes, weights = np.polynomial.legendre.leggauss(steps)
        alphas = torch.tensor(0.5 * (1 + nodes), dtype=torch.float64)
        sizes = torch.tensor(0.5 * weights, dtype=torch.float64).float().double()
        scaled = (alphas.view(-1, 1, 1) * e).requires_grad_(True)
        (gs,) = torch.autograd.grad(m.from_embedded(scaled)[:, c].sum(), scaled)
        ig = ((gs * sizes.view(-1, 1, 1)).sum(0) * e).sum(1)
        return {"saliency": g.sum(1), "gxi": (g * e).sum(1), "ig": ig, "class": c}


def close(a, b, rel=1e-8):
    scale = max(1.0, float(b.abs().max()))
    return float((a - b).abs().max()) <= rel * scale


@unittest.skipIf(torch is None, "PyTorch is not installed")
class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            cls.binary = whitebox.find_binary()
        except whitebox.WhiteboxError as e:
            raise unittest.SkipTest(str(e))

    def test_methods_equal_autograd_and_cli(self):
        inputs = [[3, 14, 15, 9, 2], [7], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]
        worst = 0.0
        for case in CASES:
            module = Classifier(**case).eval()
            with self.subTest(**case), whitebox.Explainer(module) as ex:
                want_head = {"hn": "hn", "last": "last", "max": "max", "mean": "mean", "attention": "attention"}[case["head"]]
                self.assertEqual(ex.head.split("+")[0], want_head)  # "mean+tanh": the classifier's activation
                for ids in inputs:
                    ref = references(module, ids)
                    for method in ("saliency", "gxi", "ig"):
                        got, recs = ex.attribute(ids, method=method, return_record=True)
                        self.assertEqual(recs[0]["class"], str(ref["class"]))
                        self.assertTrue(close(got, ref[method]), (method, ids, got, ref[method]))
                        worst = max(worst, float((got - ref[method]).abs().max()))
                        # The CLI on the same file: the same record, to the byte.
                        line = ex.records([ids], method=method)[0]
                        cli = subprocess.run([self.binary, "attribute", "-model", ex.path, "-head", "auto",
                                              "-verify", ex.verify, "-method", method, "-format", "json", " ".join(map(str, ids))],
                                             capture_output=True, text=True, check=True).stdout
                        self.assertEqual(line + "\n", cli)
                    if case["head"] == "attention":
                        _, recs = ex.attribute(ids, method="lrp", return_record=True)
                        m = copy.deepcopy(module).double()
                        with torch.no_grad():
                            out, _ = m.rnn(m.embedding(torch.tensor([ids])))
                            alpha = torch.softmax(m.attention(out), dim=1)[0, :, 0]
                        self.assertTrue(close(torch.tensor(recs[0]["attention"], dtype=torch.float64), alpha))
        print("\nlargest difference from float64 autograd: %.3g" % worst, file=sys.stderr)

    def test_batches_targets_and_captum(self):
        module = Classifier(kind="gru", bi=True, head="mean").eval()
        ids = torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
        with whitebox.Explainer(module) as ex:
            batch = ex.attribute(ids, method="gxi", target=1)
            self.assertEqual(tuple(batch.shape), (2, 5))
            for b in range(2):
                self.assertTrue(close(batch[b], references(module, ids[b].tolist(), cls=1)["gxi"]))
            per_row = ex.attribute(ids, method="saliency", target=[0, 2])
            for b, c in enumerate([0, 2]):
                self.assertTrue(close(per_row[b], references(module, ids[b].tolist(), cls=c)["saliency"]))
            every = ex.attribute(ids[0], method="saliency", target="all")
            self.assertEqual(tuple(every.shape), (3, 5))
            for c in range(3):
                self.assertTrue(close(every[c], references(module, ids[0].tolist(), cls=c)["saliency"]))
            ragged = ex.attribute([[1, 2], [3, 4, 5]], method="gxi")
            self.assertEqual([tuple(r.shape) for r in ragged], [(2,), (3,)])
        ig = captum.IntegratedGradients(module).attribute(ids, target=2, n_steps=50)
        for b in range(2):
            self.assertTrue(close(ig[b], references(module, ids[b].tolist(), cls=2)["ig"]))
        sal = captum.Saliency(module).attribute(ids, target=0)
        self.assertTrue(close(sal[0], references(module, ids[0].tolist(), cls=0)["saliency"]))
        dl = captum.DeepLift(module).attribute(ids)
        self.assertEqual(tuple(dl.shape), (2, 5))

    def test_refusals(self):
        class Scaled(Classifier):
            def forward(self, ids):
                return 2 * super().forward(ids)

        with self.assertRaises(whitebox.VerificationError) as cm:
            whitebox.Explainer(Scaled().eval())
        self.assertIn("line", str(cm.exception))  # the worst probe line, by number

        class Dropout(Classifier):
            def __init__(self):
                super().__init__(kind="lstm", head="mean")
                self.drop = nn.Dropout(0.5)

            def forward(self, ids):
                return self.from_embedded(self.drop(self.embedding(ids)))

        with self.assertRaises(whitebox.VerificationError):
            whitebox.Explainer(Dropout().train())  # dropout on in train mode

        class Conv(Classifier):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv1d(6, 6, 3)

        with self.assertRaises(whitebox.WhiteboxError) as cm:
            whitebox.Explainer(Conv())
        self.assertIn("conv (Conv1d)", str(cm.exception))

        module = Classifier().eval()
        with whitebox.Explainer(module) as ex:
            with self.assertRaises(whitebox.ServerError) as cm:
                ex.attribute([3, 99], method="ig")  # 99 is past the vocabulary
            self.assertEqual(cm.exception.status, 400)
            with self.assertRaises(whitebox.ServerError):
                ex.attribute([3, 4], method="nonsense")

    def test_no_process_outlives_its_explainer(self):
        ex = whitebox.Explainer(Classifier().eval())
        pid = ex.pid
        os.kill(pid, 0)  # running
        ex.close()
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)
        with self.assertRaises(whitebox.WhiteboxError):
            ex.attribute([1, 2])
        # Garbage collection ends it too.
        ex = whitebox.Explainer(Classifier().eval())
        pid = ex.pid
        del ex
        import gc
        gc.collect()
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)

    def test_killed_parent_leaves_no_server(self):
        """A Python process killed with SIGKILL (no finalizer runs): its
        server sees its standard input end and stops."""
        import signal
        import time
        here = os.path.dirname(os.path.abspath(__file__))
        code = ("import sys, time, torch; sys.path.insert(0, %r); sys.path.insert(0, %r)\n"
                "import whitebox, test_client\n"
                "ex = whitebox.Explainer(test_client.Classifier().eval())\n"
                "print(ex.pid, flush=True)\n"
                "time.sleep(60)\n") % (os.path.join(here, ".."), here)
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        try:
            pid = int(child.stdout.readline())
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
            child.stdout.close()
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            # An orphan is reaped by init; until then it may be a zombie.
            try:
                with open("/proc/%d/stat" % pid) as f:
                    if f.read().split()[2] == "Z":
                        return
            except OSError:
                return
            time.sleep(0.05)
        self.fail("the server %d outlived its killed parent" % pid)

    def test_evaluate(self):
        gen = subprocess.run([self.binary, "generate", "-net", "sp-fsa", "-n", "20", "-len", "4..10"],
                             capture_output=True, text=True, check=True).stdout.split()
        out = subprocess.run([self.binary, "attribute", "-net", "sp-fsa", "-method", "ig"] + gen,
                             capture_output=True, text=True, check=True).stdout
        scores = [json.loads(line)["scores"] for line in out.splitlines()]
        report = whitebox.evaluate("sp-fsa", gen, [torch.tensor(s) for s in scores], method="mine")
        self.assertEqual([s["method"] for s in report["sources"]], ["mine"])
        self.assertEqual(report["sources"][0]["inputs"] + report["sources"][0]["skipped"], 20)


if __name__ == "__main__":
    unittest.main()


@unittest.skipIf(torch is None, "PyTorch is not installed")
class DocTest(unittest.TestCase):
    def test_docs_python_example_runs_as_written(self):
        """docs/python.md's notebook example, run as it is written."""
        try:
            whitebox.find_binary()
        except whitebox.WhiteboxError as e:
            raise unittest.SkipTest(str(e))
        doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "python.md")
        with open(doc) as f:
            text = f.read()
        code = text.split("```python\n", 1)[1].split("```", 1)[0]
        env = {}
        exec(compile(code, doc, "exec"), env)
        self.assertEqual(tuple(env["ig"].shape), (1, 3))
        self.assertEqual(tuple(env["batch"].shape), (2, 3, 3))
        self.assertEqual(len(env["records"][0]["attention"]), 3)
