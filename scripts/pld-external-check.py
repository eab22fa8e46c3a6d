#!/usr/bin/python3
"""Compare privtrain's certified PLD ε with Google's dp_accounting, RDP and the exact value (issue 23).

Evidence only: nothing in the repository depends on Python. Needs Debian's python3-numpy, python3-scipy,
python3-mpmath and python3-attr, and a checkout of github.com/google/differential-privacy:

    /usr/bin/python3 scripts/pld-external-check.py DP_CHECKOUT/python/dp_accounting TRAINER_BINARY [SHIM_DIR]

SHIM_DIR (optional) holds an `absl/logging.py` shim when absl is not installed (dp_accounting's RDP module imports
it; the PLD path never calls it). Prints a Markdown table. The exact value: for q = 1 the N-fold Gaussian
composition is Gaussian with μ = √N/σ; for one subsampled step (N = 1) the hockey-stick divergence of the
Poisson-subsampled Gaussian has a closed form in Φ (both directions of add/remove, the larger one). Both are
solved for ε in 60-digit mpmath. "tilted" is dp_accounting's own pessimistic discretization (interval 1e-4)
composed here by an exponentially tilted FFT (λ chosen so the tilted mean lands on the ε in question, tilted at
dp_accounting's ε and then at its own answer), which keeps double-precision round-off away from small δ; it is a
tight reference, not a certified bound.
"""
import json
import subprocess
import sys
import time

import mpmath as mp

mp.mp.dps = 60
DPACC, TRAINER = sys.argv[1], sys.argv[2]
sys.path[:0] = [DPACC] + sys.argv[3:4]
import numpy as np  # noqa: E402
from scipy import special  # noqa: E402
from dp_accounting.pld import common  # noqa: E402
from dp_accounting.pld import privacy_loss_distribution as pld  # noqa: E402

DELTAS = [1e-5, 1e-9, 1e-12, 1e-15]
Q_MNIST = 256 / 60000
# (σ, q, steps): ~12 triples × 4 δ, weighted to small δ and long runs.
TRIPLES = [
    (1.1, Q_MNIST, 1), (0.7, 0.01, 1), (2.0, 0.01, 1),
    (1.1, Q_MNIST, 100), (1.1, Q_MNIST, 1000), (1.1, Q_MNIST, 10000), (1.1, Q_MNIST, 100000),
    (0.7, Q_MNIST, 10000), (2.0, Q_MNIST, 100000),
    (0.7, 0.01, 1000), (1.1, 0.01, 10000), (2.0, 0.01, 100000),
    (0.7, 1.0, 1), (1.1, 1.0, 100), (2.0, 1.0, 1000),
]



def tilted_eps(pmf, steps, delta, eps0):
    """ε for δ of the N-fold composition of dp_accounting's DensePLDPmf, composed by an exponentially tilted FFT.

    Tilting p(i) ∝ p(i)e^{λ i h} with N·mean_λ = ε puts the FFT's largest entries where the hockey-stick sum
    is decided, so double-precision round-off (relative to the maximum entry) no longer swamps small δ.
    Returns (ε, λ). Not certified; a tight reference only."""
    h, lo, p = pmf._discretization, pmf._lower_loss, np.asarray(pmf._probs, dtype=float)
    idx = np.arange(len(p))
    L = (lo + idx) * h
    logp = np.log(np.where(p > 0, p, 1e-300))
    logp[p <= 0] = -np.inf

    def mean(lam):
        w = logp + lam * L
        w -= w.max()
        e = np.exp(w)
        return (e * L).sum() / e.sum()

    target = eps0 / steps
    a, b = 0.0, 1.0
    while mean(b) < target and b < 1e4:
        a, b = b, 2 * b
    for _ in range(60):
        m = (a + b) / 2
        a, b = (m, b) if mean(m) < target else (a, m)
    lam = (a + b) / 2
    w = logp + lam * L
    logM = special.logsumexp(w)
    pt = np.exp(w - logM)
    if steps == 1:
        off, out = 0, pt
    else:
        off, out = common.self_convolve(pt, steps, tail_mass_truncation=1e-30)
    out = np.asarray(out)
    Ln = (lo * steps + off + np.arange(len(out))) * h
    # log of untilted probabilities: log p̃ − λL + N log M; round-off floor of p̃ ~ 1e-16·max → drop below 1e-13.
    good = out > 1e-13 * out.max()
    logpn = np.full(len(out), -np.inf)
    logpn[good] = np.log(out[good]) - lam * Ln[good] + steps * logM
    inf_mass = -np.expm1(steps * np.log1p(-pmf._infinity_mass))

    def d(eps):
        sel = Ln > eps
        if not sel.any():
            return inf_mass
        v = logpn[sel]
        return inf_mass + (np.exp(v) * -np.expm1(eps - Ln[sel])).sum()

    a, b = 0.0, max(eps0, 1e-3)
    while d(b) > delta:
        a, b = b, 2 * b
    for _ in range(60):
        m = (a + b) / 2
        a, b = (m, b) if d(m) > delta else (a, m)
    return b, lam


def tilted_pld_eps(pl, steps, delta, eps0):
    """max over directions; tilted at eps0 (dp_accounting's own ε), then re-tilted at the answer."""
    pmfs = [pl._pmf_remove] + ([] if pl._symmetric else [pl._pmf_add])
    eps1 = max(tilted_eps(pm, steps, delta, eps0)[0] for pm in pmfs)
    return max(tilted_eps(pm, steps, delta, eps1)[0] for pm in pmfs)


def solve(delta_of_eps, delta):
    """Smallest ε ≥ 0 with delta_of_eps(ε) ≤ δ (delta_of_eps is non-increasing), by bisection."""
    lo, hi = mp.mpf(0), mp.mpf(1)
    if delta_of_eps(lo) <= delta:
        return 0.0
    while delta_of_eps(hi) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        if delta_of_eps(mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo < mp.mpf(10) ** -14 * hi:
            break
    return float(hi)


def exact_gaussian(sigma, steps, delta):
    mu = mp.sqrt(steps) / mp.mpf(sigma)
    return solve(lambda e: mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2), delta)


def exact_subsampled_one_step(sigma, q, delta):
    s, q = mp.mpf(sigma), mp.mpf(q)
    sf = lambda x: mp.ncdf(-x)  # noqa: E731

    def remove(e):  # P = (1-q)N(0,s²) + qN(1,s²), Q = N(0,s²); loss > e iff x > x*
        x = s * s * mp.log((mp.exp(e) - (1 - q)) / q) + mp.mpf(1) / 2
        return (1 - q) * sf(x / s) + q * sf((x - 1) / s) - mp.exp(e) * sf(x / s)

    def add(e):  # P = N(0,s²), Q = the mixture; loss > e iff x < x'
        if e >= -mp.log(1 - q):
            return mp.mpf(0)
        x = s * s * mp.log((mp.exp(-e) - (1 - q)) / q) + mp.mpf(1) / 2
        return mp.ncdf(x / s) - mp.exp(e) * ((1 - q) * mp.ncdf(x / s) + q * mp.ncdf((x - 1) / s))

    return solve(lambda e: max(remove(e), add(e)), delta)


def ours(sigma, q, steps, delta, accountant):
    out = subprocess.run(
        ["nice", "-n", "5", TRAINER, "account", "epsilon", "--mech", "gaussian", "--sigma", repr(sigma),
         "--q", repr(q), "--steps", str(steps), "--delta", repr(delta), "--accountant", accountant, "--json"],
        capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip()
    r = json.loads(out.stdout)
    eps = r.get("epsilon")
    return (float(eps) if eps is not None else None), r


def fmt(x):
    if x is None:
        return "—"
    return "+Inf" if x == float("inf") else f"{x:.7g}"


def main():
    print("| σ | q | steps | δ | ours (PLD) | bound, interval | exact | RDP | dp_accounting | tilted | ours/dpacc − 1 | ours/tilted − 1 | flags |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for sigma, q, steps in TRIPLES:
        t = time.time()
        base = pld.from_gaussian_mechanism(sigma, sampling_prob=q, pessimistic_estimate=True,
                                           value_discretization_interval=1e-4)
        comp = base if steps == 1 else base.self_compose(steps, tail_mass_truncation=1e-20)
        t_dp = time.time() - t
        for delta in DELTAS:
            dp = comp.get_epsilon_for_delta(delta)
            o, meta = ours(sigma, q, steps, delta, "pld")
            r, _ = ours(sigma, q, steps, delta, "rdp")
            ex = None
            if q == 1.0:
                ex = exact_gaussian(sigma, steps, delta)
            elif steps == 1:
                ex = exact_subsampled_one_step(sigma, q, delta)
            tl = tilted_pld_eps(base, steps, delta, dp if dp != float('inf') else r)
            interval = meta.get("interval", 1e-4) if isinstance(meta, dict) else 1e-4
            bound = f"{meta.get('bound')}, {interval:g}" if isinstance(meta, dict) else f"error: {meta}"
            flags = []
            if o is None:
                flags.append("ours not finite")
            else:
                if ex is not None and o < ex:
                    flags.append("OURS<EXACT")
                if r is not None and o > r + interval:
                    flags.append("OURS>RDP+h")
                if dp not in (None, float("inf")) and o > dp * 1.01 and o - dp > 1e-3:
                    flags.append("OURS>1.01·DPACC")
                if o > tl * 1.01 and o - tl > 1e-3:
                    flags.append("OURS>1.01·TILTED")
            if ex is not None and dp < ex:
                flags.append("dpacc<exact")
            if ex is not None and tl < ex:
                flags.append("tilted<exact")
            if dp == float("inf"):
                flags.append("dpacc +Inf")
            rel = f"{o / dp - 1:+.2e}" if o is not None and dp not in (0, float("inf")) else "—"
            relt = f"{o / tl - 1:+.2e}" if o is not None and tl > 0 else "—"
            print(f"| {sigma:g} | {q:.6g} | {steps} | {delta:g} | {fmt(o)} | {bound} | {fmt(ex)} | {fmt(r)} | "
                  f"{fmt(dp)} | {fmt(tl)} | {rel} | {relt} | {' '.join(flags)} |", flush=True)
        print(f"<!-- dp_accounting build+compose {t_dp:.1f} s for σ={sigma} q={q} N={steps} -->", flush=True)


if __name__ == "__main__":
    main()
