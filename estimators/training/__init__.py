"""The training loop: compiled loops of iterations_per_loop steps, what happens between them, train_and_evaluate."""
