"""Run script for the benchmark: TabNetClassifier.fit on generated tabular data, save_model and load_model."""
import numpy as np

from pytorch_tabnet.callbacks import Callback
from pytorch_tabnet.tab_model import TabNetClassifier


class StepLog(Callback):
    def __init__(self, log):
        super().__init__()
        self.log = log

    def on_batch_end(self, batch, logs=None):
        self.log.append(float(logs['loss']))


def build():
    clf = TabNetClassifier(n_d=8, n_a=8, n_steps=3, seed=0, optimizer_params=dict(lr=2e-2), verbose=0,
                           device_name='cpu')
    rng = np.random.RandomState(1)
    clf.fit(rng.standard_normal((12, 10)).astype(np.float32), np.arange(12) % 3, max_epochs=0, batch_size=8,
            virtual_batch_size=4, compute_importance=False)
    return clf


def module(clf):
    return clf.network


def train(clf, batches, log, epochs, first=1, last=None, save=None, resume=None):
    X = np.concatenate([b[0] for b in batches])
    y = np.concatenate([b[1] for b in batches])
    if resume:
        clf.load_model(resume + '.zip')
    clf.fit(X, y, max_epochs=(last or epochs) - first + 1, patience=0, batch_size=8, virtual_batch_size=4,
            drop_last=False, callbacks=[StepLog(log)], warm_start=True, compute_importance=False)
    if save:
        clf.save_model(save)


def evaluate(clf, batches):
    X = np.concatenate([b[0] for b in batches])
    y = np.concatenate([b[1] for b in batches])
    proba = clf.predict_proba(X)
    return [float(-np.mean(np.log(proba[np.arange(len(y)), y]))), float(np.mean(proba.argmax(1) == y))]
