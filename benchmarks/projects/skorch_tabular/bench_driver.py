"""Run script for the benchmark: skorch's NeuralNetClassifier on a tabular MLP (the module from skorch's
README), trained epoch by epoch, its parameters and optimizer saved with save_params and loaded back."""
import numpy as np
from torch import nn

from skorch import NeuralNetClassifier
from skorch.callbacks import Callback


class MyModule(nn.Module):
    def __init__(self, num_units=10, nonlin=nn.ReLU()):
        super().__init__()
        self.dense0 = nn.Linear(20, num_units)
        self.nonlin = nonlin
        self.dropout = nn.Dropout(0.0)
        self.dense1 = nn.Linear(num_units, num_units)
        self.output = nn.Linear(num_units, 2)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, X, **kwargs):
        X = self.nonlin(self.dense0(X))
        X = self.dropout(X)
        X = self.nonlin(self.dense1(X))
        X = self.softmax(self.output(X))
        return X


class StepLog(Callback):
    def __init__(self, log):
        self.log = log

    def on_batch_end(self, net, batch=None, training=None, **kwargs):
        if training:
            self.log.append(float(kwargs['loss']))


def build():
    net = NeuralNetClassifier(MyModule, max_epochs=2, lr=0.1, batch_size=8, iterator_train__shuffle=False,
                              train_split=None, verbose=0, callbacks=[('steps', StepLog([]))])
    net.initialize()
    return net


def module(net):
    return net.module_


def train(net, batches, log, epochs, first=1, last=None, save=None, resume=None):
    X = np.concatenate([b[0] for b in batches])
    y = np.concatenate([b[1] for b in batches])
    net.set_params(callbacks__steps__log=log)
    if resume:
        net.load_params(f_params=resume + '.params', f_optimizer=resume + '.optimizer')
    net.partial_fit(X, y, epochs=(last or epochs) - first + 1)
    if save:
        net.save_params(f_params=save + '.params', f_optimizer=save + '.optimizer')


def evaluate(net, batches):
    X = np.concatenate([b[0] for b in batches])
    y = np.concatenate([b[1] for b in batches])
    proba = net.predict_proba(X)
    return [float(-np.mean(np.log(proba[np.arange(len(y)), y]))), float(np.mean(net.predict(X) == y))]
