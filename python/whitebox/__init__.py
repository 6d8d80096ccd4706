"""whitebox from Python: exact attributions of a live PyTorch LSTM/GRU
classifier (whitebox.Explainer, whitebox.captum) and ground-truth scoring
of any attribution on the white-box networks (whitebox.evaluate)."""

from ._binary import WhiteboxError, find_binary
from .evaluate import WhiteBoxNet, evaluate, export, generate
from .explainer import Explainer, ServerError, VerificationError, default_probe
from . import captum

__all__ = ["Explainer", "VerificationError", "ServerError", "WhiteboxError", "find_binary", "default_probe",
           "evaluate", "export", "generate", "WhiteBoxNet", "captum"]
