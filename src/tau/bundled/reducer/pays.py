"""Only where it pays: whether a receipt (of either tier) is worth what it costs.

Prices are in units of the session model's input token, cache-aware as the provider bills
(decisions.md, "The economy wave"): a token written to the prompt cache costs 1.25, read from it
0.1; the reducer model's own call is uncached input and output at 5x, scaled by its price against
the session model's. A tool result is written once and read by the later requests that carry it:
with ObservationPack on, a large result is sent in full for two requests and then packed, so the
*horizon* is 2 later reads; without it, 10.

- **Extractor tier** (no call): the receipt must save more than it costs itself, i.e. be at most
  half of the log (tokens).
- **Model tier**: the log's tokens saved over the horizon must exceed the receipt's own and the call
  (the log and the instructions as input, a receipt's worth of output). A command that exited 0 gets
  no call unless its log is at least :data:`PASSING_MIN_BYTES`: its receipt would say "it passed",
  which the exit code already does. Without prices for both models (a ``models.json`` entry with
  none, the faux models) nothing can be weighed, and every failing log from the seed's 4 KB on is
  reduced, as SoL-Pi does.

Every decision is journaled with these figures (:meth:`Decision.figures`).
"""

from __future__ import annotations

import math

from tau.common.dataclass import dataclass

__all__ = [
    "MODEL_RECEIPT_TOKENS",
    "PASSING_MIN_BYTES",
    "Decision",
    "extract_decision",
    "horizon",
    "model_decision",
    "tokens",
]

CACHE_WRITE = 1.25
CACHE_READ = 0.1
OUTPUT = 5.0
BYTES_PER_TOKEN = 4
PASSING_MIN_BYTES = 32 * 1024
MODEL_RECEIPT_TOKENS = 500  # a 12-quote receipt: ~2 KB of text
MODEL_OUTPUT_TOKENS = 400  # its JSON answer
HORIZON_PACKED = 2  # ObservationPack sends a large result in full twice, then a placeholder
HORIZON_UNPACKED = 10


def tokens(size_bytes: int) -> int:
    """An estimate of the tokens of ``size_bytes`` of UTF-8 text (4 bytes a token, as tau counts)."""
    return math.ceil(size_bytes / BYTES_PER_TOKEN)


def horizon(observation_pack: bool) -> int:
    return HORIZON_PACKED if observation_pack else HORIZON_UNPACKED


@dataclass(frozen=True)
class Decision:
    """One pay decision and the figures it was made on (units: the session model's input token)."""

    tier: str  # "extract" | "model"
    pays: bool
    source_tokens: int
    receipt_tokens: int
    horizon: int
    saving_units: float
    cost_units: float
    price_ratio: float | None = None
    call_tokens: int = 0
    reason: str | None = None  # why it does not pay

    def figures(self) -> dict[str, object]:
        return {
            "tier": self.tier,
            "pays": self.pays,
            "sourceTokens": self.source_tokens,
            "receiptTokens": self.receipt_tokens,
            "horizon": self.horizon,
            "savingUnits": round(self.saving_units, 1),
            "costUnits": round(self.cost_units, 1),
            **(
                {
                    "priceRatio": None if self.price_ratio is None else round(self.price_ratio, 4),
                    "callTokens": self.call_tokens,
                }
                if self.tier == "model"
                else {}
            ),
            **({"reason": self.reason} if self.reason else {}),
        }


def _carried(count: int, reads: int) -> float:
    return count * (CACHE_WRITE + CACHE_READ * reads)


def extract_decision(source_bytes: int, receipt_bytes: int, reads: int) -> Decision:
    """An extracted receipt pays when it saves more than it costs: at most half the log."""
    source, receipt = tokens(source_bytes), tokens(receipt_bytes)
    saving = _carried(source - receipt, reads)
    cost = _carried(receipt, reads)
    pays = saving > cost
    return Decision(
        "extract", pays, source, receipt, reads, saving, cost, reason=None if pays else "receipt-too-large"
    )


def model_decision(
    source_bytes: int, instruction_bytes: int, is_error: bool, price_ratio: float | None, reads: int
) -> Decision:
    """Whether a call to the reducer model is worth it, before it is made.

    ``price_ratio`` is the reducer model's input price over the session model's (``None``: unknown).
    """
    source = tokens(source_bytes)
    call = source + tokens(instruction_bytes)
    saving = _carried(source - MODEL_RECEIPT_TOKENS, reads)
    # the saving is net of the receipt; unknown prices weigh the call at the session model's price
    cost = (1.0 if price_ratio is None else price_ratio) * (call + OUTPUT * MODEL_OUTPUT_TOKENS)
    reason = None
    if not is_error and source_bytes < PASSING_MIN_BYTES:
        reason = "passing-command"
    elif price_ratio is not None and saving <= cost:
        reason = "call-costs-more"
    return Decision(
        "model", reason is None, source, MODEL_RECEIPT_TOKENS, reads, saving, cost, price_ratio, call, reason
    )
