package coordclip

import (
	"fmt"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/runner"
)

// MethodName is the training method this package registers with privtrain's
// runner: DP-SGD whose release is the coordinate-clipped sum. It trains
// through runner.Train (TrainConfig.Method) like the built-in methods, and
// through `trainer train --method dpsgd-coordclip --coord-clip C` in a
// trainer binary that imports this package.
const MethodName = "dpsgd-coordclip"

// MethodOptionC is the method's option (and flag) of the coordinate bound c.
const MethodOptionC = "coord-clip"

func init() {
	runner.RegisterMethod(runner.Method{
		Name:    MethodName,
		Summary: "DP-SGD with the coordinate-clipped sum (rule " + Name + ", --coord-clip c)",
		Private: true, // Poisson sampling, secure release, the default accountant, a target ε
		Flags:   append(runner.SGDFlags(), runner.PrivateFlags()...),
		Options: []runner.MethodOption{{Name: MethodOptionC, Usage: "coordinate bound c of the coordinate-clipped sum", Default: 0.004}},
		Rule: func(c *runner.TrainConfig, ac aggregate.Config) (string, aggregate.Config) {
			ac.Options = map[string]float64{OptionC: c.MethodOption(MethodOptionC)}
			return Name, ac
		},
		Validate: func(c *runner.TrainConfig) error {
			if v := c.MethodOption(MethodOptionC); !(v > 0) || v > 1e6 {
				return fmt.Errorf("invalid configuration: --%s must be in (0, 1e6], got %v", MethodOptionC, v)
			}
			return nil
		},
	})
}
