"""How sure a result is: pure functions over counts of results.

- `elo`: a pair of engines' Elo difference, its error, normalised Elo and LOS, from W/D/L
  counts (the trinomial model) or from the pentanomial counts of game pairs;
- `sprt`: the log-likelihood ratio of a sequential probability ratio test, and its verdict;
- `ratings`: every engine's Elo in a field, fitted by maximum likelihood over all its games,
  with a 95 % interval.

numpy and scipy do the numbers (root finding, the fit, the normal distribution).
"""
