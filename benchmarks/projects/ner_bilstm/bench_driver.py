"""Run script for the benchmark: pytorch-ner's main._train lines on generated sentences."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from pytorch_ner.dataset import NERCollator, NERDataset
from pytorch_ner.nn_modules.architecture import BiLSTM
from pytorch_ner.nn_modules.embedding import Embedding
from pytorch_ner.nn_modules.linear import LinearHead
from pytorch_ner.nn_modules.rnn import DynamicRNN
from pytorch_ner.prepare_data import get_label2idx, get_token2idx
from pytorch_ner.train import train_epoch, validate_epoch

LABELS = ['B-LOC', 'B-PER', 'I-LOC', 'I-PER', 'O']
TOKEN2IDX = get_token2idx({str(i): 1 for i in range(60)})
LABEL2IDX = get_label2idx(LABELS)


def sentences(batches):
    """Generated sentences: tokens and labels cut to 4 + the third array's length."""
    tokens, labels = [], []
    for b in batches:
        for row_tokens, row_labels, n in zip(b[0], b[1], b[2]):
            tokens.append([str(t) for t in row_tokens[:4 + int(n)]])
            labels.append([LABELS[int(t)] for t in row_labels[:4 + int(n)]])
    return tokens, labels


def loader(batches, batch_size):
    tokens, labels = sentences(batches)
    dataset = NERDataset(token_seq=tokens, label_seq=labels, token2idx=TOKEN2IDX, label2idx=LABEL2IDX, preprocess=True)
    collator = NERCollator(token_padding_value=TOKEN2IDX['<PAD>'], label_padding_value=LABEL2IDX['O'], percentile=100)
    return DataLoader(dataset=dataset, batch_size=batch_size, shuffle=False, collate_fn=collator)


def build():
    embedding_layer = Embedding(num_embeddings=len(TOKEN2IDX), embedding_dim=16)
    rnn_layer = DynamicRNN(rnn_unit=nn.LSTM, input_size=16, hidden_size=16, num_layers=1, dropout=0.0,
                           bidirectional=True)
    linear_head = LinearHead(linear_head=nn.Linear(in_features=2 * 16, out_features=len(LABEL2IDX)))
    return BiLSTM(embedding_layer=embedding_layer, rnn_layer=rnn_layer, linear_head=linear_head)


def train(model, batches, log, epochs, first=1, last=None, save=None, resume=None):
    device = torch.device('cpu')
    train_loader = loader(batches, len(batches[0][0]))
    criterion = nn.CrossEntropyLoss(reduction='none')
    optimizer = torch.optim.Adam(params=model.parameters(), lr=0.001, amsgrad=False)
    if resume:
        checkpoint = torch.load(resume)
        model.load_state_dict(checkpoint['model'])
        optimizer.load_state_dict(checkpoint['optimizer'])
    for epoch in range(first, (last or epochs) + 1):
        metrics = train_epoch(model=model, dataloader=train_loader, criterion=criterion, optimizer=optimizer,
                              device=device, clip_grad_norm=0.1, verbose=False)
        log.extend(metrics['loss'])
    if save:
        torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()}, save)


def evaluate(model, batches):
    criterion = nn.CrossEntropyLoss(reduction='none')
    metrics = validate_epoch(model=model, dataloader=loader(batches, 1), criterion=criterion,
                             device=torch.device('cpu'), verbose=False)
    return [float(np.mean(metrics['loss'])), float(np.mean(metrics['f1-weighted']))]
