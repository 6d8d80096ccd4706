"""Captum-shaped attributions computed by whitebox.

Each class takes the module (token ids -> logits) and returns, from
attribute(inputs, target=...), what Captum's Layer* method on the module's
embedding returns summed over the embedding dimension: one float64 score
per token, shape (B, T) for ids (B, T). The differences from Captum, in
every class: the computation is exact float64 on the module's weights
(whitebox's engine, checked against the module's own logits when the
Explainer starts); the class is the predicted one when target is None;
IG uses Gauss-Legendre nodes with Captum's float32-rounded step sizes.
"""

import weakref

from .explainer import Explainer

_explainers = weakref.WeakKeyDictionary()


def _explainer(module):
    ex = _explainers.get(module)
    if ex is None:
        ex = _explainers[module] = Explainer(module)
    return ex


def _baseline(baselines):
    if baselines is None or (isinstance(baselines, (int, float)) and baselines == 0 and not isinstance(baselines, bool) and isinstance(baselines, float)):
        return {}
    if isinstance(baselines, int):
        return {"baseline": "id:%d" % baselines}
    raise ValueError("baselines: None (the zero embedding) or a token id (its embedding row at every position), not %r" % (baselines,))


class _Method:
    method = None

    def __init__(self, forward_func):
        self.forward_func = forward_func

    def _run(self, inputs, target, **params):
        return _explainer(self.forward_func).attribute(inputs, method=self.method, target=target, **params)


class IntegratedGradients(_Method):
    """LayerIntegratedGradients(module, module.embedding).attribute(ids,
    baselines=..., target=..., n_steps=...).sum(-1), with these differences:
    baselines=None is the zero embedding (Captum's layer default is token
    id 0: pass baselines=0 for it), an int is that token's embedding row;
    the integral is exact float64 with Gauss-Legendre nodes and Captum's
    float32-rounded step sizes."""

    method = "ig"

    def attribute(self, inputs, baselines=None, target=None, n_steps=50, return_convergence_delta=False):
        out, recs = _explainer(self.forward_func).attribute(inputs, method="ig", target=target, return_record=True,
                                                             steps=n_steps, **_baseline(baselines))
        if return_convergence_delta:
            import torch
            return out, torch.tensor([r["delta"] for r in recs], dtype=torch.float64)
        return out


class Saliency(_Method):
    """Captum's Saliency(abs=False) on the embedded input, summed over the
    embedding dimension: the signed gradient of the target's logit."""

    method = "saliency"

    def attribute(self, inputs, target=None):
        return self._run(inputs, target)


class InputXGradient(_Method):
    """LayerGradientXActivation on the embedding (InputXGradient on the
    embedded input), summed over the embedding dimension."""

    method = "gxi"

    def attribute(self, inputs, target=None):
        return self._run(inputs, target)


class DeepLift(_Method):
    """DeepLIFT with whitebox's rules (Rescale at every sigmoid and tanh,
    the symmetric split at every product of two varying factors, through
    the LSTM/GRU gates, which Captum's DeepLift passes with plain
    gradients): the scores sum to f_c(x) - f_c(reference)."""

    method = "deeplift"

    def attribute(self, inputs, baselines=None, target=None):
        return self._run(inputs, target, **_baseline(baselines))


class Occlusion(_Method):
    """Occlusion(f).attribute(emb, sliding_window_shapes=(1, E),
    baselines=row) on the embedded input, one token at a time: f_c(x)
    minus f_c with that token's embedding set to the baseline row."""

    method = "occlusion"

    def attribute(self, inputs, baselines=None, target=None):
        return self._run(inputs, target, **_baseline(baselines))


class LRP(_Method):
    """Layer-wise relevance propagation with the epsilon rule through the
    linear maps and the gates' signals taking all relevance (Arras et al.
    2017), which Captum's LRP has no rules for inside nn.LSTM/nn.GRU."""

    method = "lrp"

    def attribute(self, inputs, target=None, eps=None):
        params = {} if eps is None else {"eps": eps}
        return self._run(inputs, target, **params)
