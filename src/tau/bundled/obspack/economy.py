"""What packing pays: the batch of swaps against the cache, and one old result against its refetch.

Prices are in cache-read units: reading a token from the cache costs 1, writing one ``r`` (the
model's cache write price over its read price: 12.5 for Anthropic, 10 for OpenAI).

- **A batch of swaps** (:func:`swaps_pay`): each swap breaks the cached prefix where its message
  sits, so the suffix from the earliest swap on is written again now; the tokens the swaps remove
  are then not read by each of the requests still expected.
- **One old result** (:func:`pays_to_pack`, issue 25): packing a result the model no longer uses
  saves its tokens on every later request, but a model that turns out to need it again makes one
  more request to fetch it (an ``obs_recall``, a re-read, a re-run): that request reads the whole
  context and writes the result back. So an old result is packed only when

      remaining × saved  >  p × (context + r × tokens)

  ``saved`` the tokens its placeholder removes, ``tokens`` its own size, ``context`` the tokens
  the request carries as sent, ``remaining`` the requests still expected, and ``p``
  (:data:`REFETCH_CHANCE`) the chance that a result unused for a window of turns is needed again.
  Small results in a large context never pay: a refetch reads the whole context again.
"""

from __future__ import annotations

from tau.common.dataclass import dataclass

__all__ = ["REFETCH_CHANCE", "Economy", "expected_remaining", "pays_to_pack", "swaps_pay"]

# The chance that a result the model has not used for a window of turns is fetched again. Chosen on
# the economy benchmark's personas and the real pi sessions (docs/extensions/sol.md, "Why these defaults").
REFETCH_CHANCE = 0.1


def expected_remaining(requests: int) -> int:
    """How many more requests a context that has seen ``requests`` will serve: half as many again.

    Session lengths are long-tailed, so the requests already made are the natural estimate of those
    to come (the median of a Lindy prior); half of it hedges the asymmetry of the bet (a swap that
    does not pay back costs a whole suffix written again) and measured best on the economy benchmark
    (``bench/README.md``).
    """
    return max(1, requests // 2)


def swaps_pay(saved: int, suffix: int, remaining: int, write_read_ratio: float) -> bool:
    """Whether swapping pays: ``saved`` tokens not read by each of ``remaining`` later requests,
    against writing again the ``suffix`` (from the earliest swap on) instead of reading it now.
    Prices in cache-read units: a read costs 1, a write ``write_read_ratio``."""
    extra_now = max(0, suffix - saved) * write_read_ratio - suffix
    return remaining * saved > extra_now


def pays_to_pack(
    saved: int,
    tokens: int,
    context: int,
    remaining: int,
    write_read_ratio: float,
    refetch_chance: float = REFETCH_CHANCE,
) -> bool:
    """Whether packing an old result of ``tokens`` (its placeholder saving ``saved``) pays for the
    refetch it may cost: ``remaining × saved > p × (context + r × tokens)``."""
    return remaining * saved > refetch_chance * (context + write_read_ratio * tokens)


@dataclass(frozen=True)
class Economy:
    """One request's figures for :func:`pays_to_pack` (``None`` in a decision: no economic floor)."""

    context: int
    remaining: int
    write_read_ratio: float
    refetch_chance: float = REFETCH_CHANCE

    def pays(self, saved: int, tokens: int) -> bool:
        return pays_to_pack(
            saved, tokens, self.context, self.remaining, self.write_read_ratio, self.refetch_chance
        )
