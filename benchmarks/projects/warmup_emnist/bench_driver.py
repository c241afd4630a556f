"""Run script for the benchmark: main()'s lines of pytorch-warmup's EMNIST example on generated data."""
import io
import types

import torch
import torch.optim as optim

import main as example
import pytorch_warmup as warmup


def build():
    return example.Net()


def loader(batches, batch_size, shuffle=False, drop_last=False):
    x = torch.cat([torch.from_numpy(b[0]) for b in batches])
    y = torch.cat([torch.from_numpy(b[1]) for b in batches])
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch_size,
                                       shuffle=shuffle, drop_last=drop_last)


def train(model, batches, log, epochs, first=1, last=None, save=None, resume=None):
    args = types.SimpleNamespace(log_interval=1, lr=0.01, lr_min=1e-5, wd=0.01, beta2=0.999)
    device = torch.device('cpu')
    train_loader = loader(batches, len(batches[0][0]), drop_last=True)
    optimizer = optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, args.beta2), weight_decay=args.wd)
    num_steps = len(train_loader) * epochs
    lr_scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=num_steps, eta_min=args.lr_min)
    warmup_scheduler = warmup.UntunedLinearWarmup(optimizer)
    if resume:
        checkpoint = torch.load(resume)
        model.load_state_dict(checkpoint['model'])
        optimizer.load_state_dict(checkpoint['optimizer'])
        lr_scheduler.load_state_dict(checkpoint['lr_scheduler'])
        warmup_scheduler.load_state_dict(checkpoint['warmup'])
    history = io.StringIO()
    for epoch in range(first, (last or epochs) + 1):
        example.train(args, model, device, train_loader, optimizer, lr_scheduler, warmup_scheduler, epoch, history)
    if save:
        torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),
                    'lr_scheduler': lr_scheduler.state_dict(), 'warmup': warmup_scheduler.state_dict()}, save)
    log.extend(float(line.split(',')[2]) for line in history.getvalue().splitlines())


def evaluate(model, batches):
    args = types.SimpleNamespace()
    evaluation = io.StringIO()
    example.test(args, model, torch.device('cpu'), loader(batches, 1000), 1, evaluation)
    return [float(v) for v in evaluation.getvalue().split(',')[1:]]
