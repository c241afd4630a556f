"""Run script for the benchmark: main()'s lines of torch-optimizer's MNIST example on generated data."""
import contextlib
import io

import torch
from torch.optim.lr_scheduler import StepLR

import mnist
import torch_optimizer as optim


class NoWriter:
    def add_scalar(self, *args, **kwargs):
        pass


def build():
    return mnist.Net()


def loader(batches, batch_size):
    x = torch.cat([torch.from_numpy(b[0]) for b in batches])
    y = torch.cat([torch.from_numpy(b[1]) for b in batches])
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch_size, shuffle=False)


def train(model, batches, log, epochs, first=1, last=None, save=None, resume=None):
    conf = mnist.Config(batch_size=len(batches[0][0]), epochs=epochs, log_interval=1)
    device = torch.device('cpu')
    train_loader = loader(batches, conf.batch_size)
    optimizer = optim.DiffGrad(model.parameters(), lr=conf.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=conf.gamma)
    if resume:
        checkpoint = torch.load(resume)
        model.load_state_dict(checkpoint['model'])
        optimizer.load_state_dict(checkpoint['optimizer'])
        scheduler.load_state_dict(checkpoint['scheduler'])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for epoch in range(first, (last or epochs) + 1):
            mnist.train(conf, model, device, train_loader, optimizer, epoch, NoWriter())
            scheduler.step()
    if save:
        torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),
                    'scheduler': scheduler.state_dict()}, save)
    log.extend(float(line.split('Loss: ')[1]) for line in out.getvalue().splitlines() if 'Loss: ' in line)


def evaluate(model, batches):
    conf = mnist.Config()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        mnist.test(conf, model, torch.device('cpu'), loader(batches, 1000), 1, NoWriter())
    line = next(line for line in out.getvalue().splitlines() if 'Average loss' in line)
    return [float(line.split('Average loss: ')[1].split(',')[0]), float(line.split('Accuracy: ')[1].split('/')[0])]
