package aggregate

// Clipping is implemented by rules whose analysis assumes that every
// per-example gradient is clipped to an L2 norm R (Config.ClipNorm): the
// sensitivity of the private rules, the bounded inputs of the robust ones.
// ClipNorm returns that R (0: the rule needs no clipping). The trainer
// clips to it (optim.Config.ClipNorm may then stay 0), so a run states R
// once, in the rule's configuration. Every built-in rule but rgm-sum, which
// needs no clipping, implements it.
type Clipping interface {
	ClipNorm() float64
}

// clipNorm is the Clipping part of the built-in rules: the R of their
// configuration.
type clipNorm float64

// ClipNorm returns R, the clipping norm of the rule's configuration (0: no
// clipping).
func (r clipNorm) ClipNorm() float64 { return float64(r) }
