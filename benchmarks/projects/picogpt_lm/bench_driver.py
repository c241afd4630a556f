"""Run script for the benchmark: picogpt's PicoGPT trained on a generated corpus, saved and loaded."""
import contextlib
import io

import numpy as np
import torch
import torch.nn.functional as F

from picogpt import PicoGPT

CORPUS = 'corpus.txt'


def write_corpus():
    chars = np.random.RandomState(0).randint(32, 127, size=3000)
    with open(CORPUS, 'w') as f:
        f.write(''.join(chr(int(c)) for c in chars))


def build():
    pico = PicoGPT(block_size=32, n_embd=32, n_head=2, n_layer=1, dropout=0.0, batch_size=8,
                   learning_rate=3e-3, device='cpu', amp=True)
    pico._ensure_model()
    return pico


def module(pico):
    return pico.model


def train(pico, batches, log, epochs, first=1, last=None, save=None, resume=None):
    write_corpus()
    if resume:
        pico.load_model(resume)
    epochs_run = (last or epochs) - first + 1
    pico.cfg.train_steps = epochs_run * len(batches)
    pico.bench_windows = [b[0] for _ in range(epochs_run) for b in batches]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        pico.train_with_file(CORPUS)
        if save:
            pico.save_model(save)
    log.extend(float(line.split('loss=')[1]) for line in out.getvalue().splitlines() if 'loss=' in line)


def evaluate(pico, batches):
    write_corpus()
    with open(CORPUS) as f:
        stream = torch.tensor(pico.enc.encode(f.read()), dtype=torch.long)
    T = pico.cfg.block_size
    pico.model.eval()
    losses = []
    with torch.no_grad():
        for b in batches:
            x = torch.stack([stream[i:i + T] for i in b[0]])
            y = torch.stack([stream[i + 1:i + T + 1] for i in b[0]])
            logits, _ = pico.model(x)
            losses.append(F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1)).item())
    return [float(np.mean(losses))]
