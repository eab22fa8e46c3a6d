// Package optim is the training step: sample → corrupt → per-example
// gradients → clip → aggregate → update → account (Trainer, Config), with
// step policies (StepPolicy) for method-specific adaptation. MakePrivate
// builds a ready DP-SGD trainer for library users.
package optim
