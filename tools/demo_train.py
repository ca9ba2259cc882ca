"""`rulegrad demo`'s training run: a small MLP learns a synthetic classification task.

In: nothing (fixed seeds). Out: the loss per epoch, the accuracy on held-out points, and True
when it reaches `TARGET_ACCURACY`. Each step is `loss.backward()` then `opt.step(loss)`: the
forward and backward graphs, the gradients and Adam's updates (ASSIGNs) are one schedule,
compiled to C once and replayed on each new batch (runtime/schedule_cache.py).

The task: points in 2-D, labelled by quadrant (4 classes; no linear model separates them),
plus noise dimensions that carry nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

SEED = 0
N_TRAIN, N_TEST, D_IN, D_HID, CLASSES = 512, 256, 8, 32, 4
BATCH, EPOCHS, LR = 64, 12, 0.02
TARGET_ACCURACY = 0.9


def make_data(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.uniform(-1, 1, (n, D_IN)).astype(np.float32)
    y = 2 * (x[:, 0] > 0) + (x[:, 1] > 0)
    return x, y.astype(np.int64)


def train(epochs: int = EPOCHS, log: Callable[[str], None] = print,
          advance: Callable[[], None] = lambda: None) -> tuple[list[float], float]:
    """Train; return the mean loss of each epoch and the final test accuracy."""
    from rulegrad import Tensor
    from rulegrad.nn.optim import Adam

    rng = np.random.default_rng(SEED)
    x_train, y_train = make_data(N_TRAIN, rng)
    x_test, y_test = make_data(N_TEST, rng)
    w1 = Tensor((rng.standard_normal((D_IN, D_HID)) / np.sqrt(D_IN)).astype(np.float32))
    b1 = Tensor(np.zeros(D_HID, np.float32))
    w2 = Tensor((rng.standard_normal((D_HID, CLASSES)) / np.sqrt(D_HID)).astype(np.float32))
    b2 = Tensor(np.zeros(CLASSES, np.float32))
    opt = Adam([w1, b1, w2, b2], lr=LR)

    def logits(x: Tensor) -> Tensor:
        return (x @ w1 + b1).relu() @ w2 + b2

    eye = np.eye(CLASSES, dtype=np.float32)
    losses = []
    for epoch in range(epochs):
        order = rng.permutation(N_TRAIN)
        total = 0.0
        for k in range(0, N_TRAIN, BATCH):
            idx = order[k:k + BATCH]
            x, y = Tensor(x_train[idx]), Tensor(eye[y_train[idx]])
            loss = -(logits(x).log_softmax() * y).sum(axis=1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step(loss)
            total += loss.item()
            advance()
        losses.append(total / (N_TRAIN // BATCH))
        log(f"epoch {epoch + 1:2d}/{epochs}: loss {losses[-1]:.4f}")
    predicted = logits(Tensor(x_test)).numpy().argmax(axis=1)
    return losses, float((predicted == y_test).mean())


def run_training(print_line: Callable[[str], None]) -> bool:
    """The demo's training part, with a progress bar (rich); True when it converged."""
    steps = EPOCHS * (N_TRAIN // BATCH)
    try:
        from rich.progress import Progress
    except ImportError:  # rich is a dependency; plain lines are enough without it
        losses, acc = train(EPOCHS, log=print_line)
    else:
        with Progress(transient=True) as bar:
            task = bar.add_task("training", total=steps)
            losses, acc = train(EPOCHS, log=bar.console.print,
                                advance=lambda: bar.advance(task))
    ok = acc >= TARGET_ACCURACY and losses[-1] < losses[0]
    print_line(f"training: MLP {D_IN}-{D_HID}-{CLASSES}, Adam, {len(losses)} epochs: loss "
               f"{losses[0]:.3f} -> {losses[-1]:.3f}, test accuracy {acc:.1%} "
               + ("(converged)" if ok else f"(DID NOT CONVERGE: needs {TARGET_ACCURACY:.0%})"))
    return ok
