"""Run script for the benchmark: wavencoder's trainer on a raw-waveform CNN1d + LSTM attention classifier."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

import wavencoder


class AudioClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = wavencoder.models.CNN1d(conv_layers=[(32, 10, 5), (32, 8, 4)])
        self.classifier = wavencoder.models.LSTM_Attn_Classifier(32, 32, 4, attn_type='soft')

    def forward(self, x):
        return self.classifier(self.encoder(x))


class LoggedLoss(nn.Module):
    """CrossEntropyLoss that keeps every value it computes (training and validation batches)."""

    def __init__(self, log):
        super().__init__()
        self.loss = nn.CrossEntropyLoss()
        self.log = log

    def forward(self, y_hat, y):
        loss = self.loss(y_hat, y)
        self.log.append(loss.item())
        return loss


def build():
    return AudioClassifier()


def loader(batches, batch_size):
    x = torch.cat([torch.from_numpy(b[0]) for b in batches])
    y = torch.cat([torch.from_numpy(b[1]) for b in batches])
    return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=False)


def train(model, batches, log, epochs, first=1, last=None, save=None, resume=None):
    if resume:
        model.load_state_dict(torch.load(resume))
    trainloader = loader(batches, len(batches[0][0]))
    valloader = loader(batches[:2], len(batches[0][0]))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    wavencoder.train(model, trainloader, valloader, (last or epochs) - first + 1, optimizer=optimizer,
                     scheduler=scheduler, criterion=LoggedLoss(log), device=torch.device('cpu'),
                     save_path=save or 'trained_model.pt')


def evaluate(model, batches):
    result = wavencoder.test_evaluate_classifier(model, loader(batches, len(batches[0][0])),
                                                 criterion=nn.CrossEntropyLoss(), device=torch.device('cpu'))
    return [result['test_loss'], result['test_acc']]
