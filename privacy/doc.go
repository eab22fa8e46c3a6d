// Package privacy is privtrain's privacy accounting: Rényi-DP (RDP) curves of
// mechanisms, privacy amplification by Poisson subsampling, composition in an
// accountant, conversions from RDP to (ε, δ)-DP, and noise calibration.
//
// It is pure float64 math on top of gonum and imports nothing else from
// privtrain, so a Go program can use the accountant alone.
//
// Every bound states its source (paper, theorem) and its validity conditions in
// its doc comment, checks them at run time and reports, per order, which bound
// produced a value (RDPValue.Bound) and whether it is proven there
// (RDPValue.Valid).
//
// Overview:
//
//   - Mechanisms (Mechanism): Gaussian, Laplace, SubsampledGaussian (MTZ19),
//     PTR (Theorem 4.3), PoissonSubsampled (white-box Theorem 4.4 or Zhu &
//     Wang 2019 black-box / lower bounds), RGM (relative Gaussian, Theorem 1).
//     FromSpec rebuilds any registered kind from its Spec; Register adds a
//     kind defined in another package, so the accountant can reload its
//     history (and a run using it can resume).
//   - Conversions: EpsilonFromRDP and DeltaFromRDP with ConversionMironov
//     (Mironov 2017) or ConversionBBG (Balle et al. 2020), minimized over a
//     grid of orders (DefaultOrders is Opacus' grid).
//   - RDPAccountant: composes mechanisms' RDP curves (cached per Spec),
//     refuses unproven bounds unless AccountantOptions.AllowUnproven,
//     answers ε for δ and δ for ε, and serializes its full history as JSON
//     for exact resumption.
//   - CalibrateSigma: the smallest DP-SGD noise multiplier for a target
//     (ε, δ) on any accountant, optionally after a prior history (PDP-SGD's
//     Algorithm 4).
//   - StrongComposition: (ε, δ)-DP composition (Kairouz, Oh & Viswanath
//     2015), for analyses that have no RDP curve, such as PTRDirect.
//   - PersonalizedEpsilons: per-example ε from individual RDP curves
//     (Theorem 4.8 of the Personalized DP-SGD paper).
//   - PLD: discretized privacy loss distributions of the dominating pairs of
//     Gaussian, Laplace, PTR (the envelope pair of docs/ptr-pld.md,
//     ptr_pld.go, discretized from its privacy profile, pld_profile.go) and
//     Poisson-subsampled mechanisms (PLDMechanism), per adjacency direction,
//     with a certified connect-the-dots upper estimate and an optimistic one;
//     FFT composition and repeated squaring (pld.go states the proof and the
//     floating-point assumptions).
//   - Accountant: the one interface of every accountant: the RDP one
//     (RDPAccounting), the PLD one (PLDAccountant) and any other registered
//     with RegisterAccountant (accountant_registry.go), made by name
//     (NewAccountant) and restored from JSON (LoadAccountant).
//     DefaultAccountant is the one rule for the default (PLD where the
//     mechanism has one, else RDP), DefaultConversion the one default RDP →
//     (ε, δ) conversion; EpsilonSoFar is the per-step ε (the PLD
//     accountant's cached certified bound); MaxSteps answers budget
//     questions. Code outside this package never branches on the kind
//     (internal/seamcheck keeps it so).
//   - CalibrateSigma on PLD (pld_calibrate.go) searches on a coarser,
//     still certified grid and refines on the accountant's grid; squaring
//     chains, prefix compositions and shared step PLDs (PLDCache) make
//     repeated queries cheap, bit for bit equal to fresh ones.
package privacy
