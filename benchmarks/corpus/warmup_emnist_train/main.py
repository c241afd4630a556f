import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

import time
import types


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 20, 5, 1)
        self.conv2 = nn.Conv2d(20, 50, 5, 1)
        self.fc1 = nn.Linear(4*4*50, 500)
        self.fc2 = nn.Linear(500, 47)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(x, 2, 2)
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2, 2)
        x = x.view(-1, 4*4*50)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def train(args, model, device, train_loader, optimizer, lr_scheduler,
          epoch, history):
    since = time.time()
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        lr = optimizer.param_groups[0]['lr']
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        lr_scheduler.step()
        if (batch_idx+1) % args.log_interval == 0:
            loss = loss.item()
            step = (epoch - 1) * len(train_loader) + batch_idx + 1
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f} LR: {:.6f}'.format(
                epoch, (batch_idx+1) * len(data), len(train_loader) * len(data),
                100. * (batch_idx+1) / len(train_loader), loss, lr))
            history.write(f'{epoch},{step},{loss:g},{lr:g}\n')
    print('Train Elapsed Time: {:.3f} sec'.format(time.time()-since))


def test(args, model, device, test_loader, epoch, evaluation):
    since = time.time()
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)
    test_acc = 100. * correct / len(test_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)'.format(
        test_loss, correct, len(test_loader.dataset), test_acc))
    evaluation.write(f'{epoch},{test_loss:g},{test_acc:.2f}\n')
    evaluation.flush()
    print('Test Elapsed Time: {:.3f} sec\n'.format(time.time()-since))


def run_training(model, train_loader, history, epochs=2, lr=0.01, lr_min=1e-5, wd=0.01, beta2=0.999, log_interval=1):
    args = types.SimpleNamespace(log_interval=log_interval)
    device = torch.device('cpu')
    optimizer = optim.AdamW(model.parameters(), lr=lr,
                            betas=(0.9, beta2),
                            weight_decay=wd)
    num_steps = len(train_loader) * epochs
    lr_scheduler = optim.lr_scheduler.CosineAnnealingLR(
        optimizer, T_max=num_steps, eta_min=lr_min)

    for epoch in range(1, epochs + 1):
        train(args, model, device, train_loader, optimizer, lr_scheduler,
              epoch, history)
