# containerd-shim-runsc-v1 sets its own oom_score_adj to -999 and treats a failure as fatal
# (pkg/shim/v1/manager.go). Lowering oom_score_adj needs CAP_SYS_RESOURCE, which root lacks
# on this machine, and no option turns the call off. containerd's own runc shim only raises
# its score (shim.AdjustOOMScore). The failure is dropped silently: at this point the shim's
# `start` prints its bootstrap reply on stdout, and any log line there breaks it ("failed to
# create TTRPC connection: unsupported protocol"). Applied by `scripts/kube-testenv build
# --node` to a copy of the module source.
s|return shim.BootstrapParams{}, fmt.Errorf("failed to set OOM Score on shim: %w", err)|_ = err // may not lower oom_score_adj: tools/kube-testenv/node/gvisor-shim-oom-score.sed|
