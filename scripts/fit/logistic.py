"""The logistic regression the fitting scripts share (fit-abstain.py, fit-fusion.py). Pure Python."""
import math


def fit(xs, ys, iterations, rate=0.5, l2=0.01):
    """Class-balanced logistic regression by gradient descent on standardised features; returns
    (weights, bias) on the raw scale, so a score is bias + sum(w * x) of the raw features."""
    n, d = len(xs), len(xs[0])
    mean = [sum(x[j] for x in xs) / n for j in range(d)]
    sd = [math.sqrt(sum((x[j] - mean[j]) ** 2 for x in xs) / n) or 1.0 for j in range(d)]
    zs = [[(x[j] - mean[j]) / sd[j] for j in range(d)] for x in xs]
    positive = sum(ys) / n
    sample = [0.5 / positive if y else 0.5 / (1 - positive) for y in ys]
    w, b = [0.0] * d, 0.0
    for _ in range(iterations):
        grad, grad_b = [0.0] * d, 0.0
        for z, y, s in zip(zs, ys, sample):
            # Clamped so a far-off example cannot overflow exp(); the sigmoid is flat out there.
            t = max(-30.0, min(30.0, sum(wi * zi for wi, zi in zip(w, z)) + b))
            g = (1 / (1 + math.exp(-t)) - y) * s
            grad_b += g
            for j in range(d):
                grad[j] += g * z[j]
        w = [wj - rate * (gj / n + l2 * wj) for wj, gj in zip(w, grad)]
        b -= rate * grad_b / n
    raw = [w[j] / sd[j] for j in range(d)]
    return raw, b - sum(raw[j] * mean[j] for j in range(d))
