"""Run script for the benchmark: nano-gpt's trainer (gradient accumulation over 2 micro-batches, autocast,
clip_grad_norm_, per-step learning rate, its own checkpoints) on a one-layer GPT and generated tokens."""
import pathlib

import torch

from nano_gpt.checkpoint import load_checkpoint
from nano_gpt.config import DatasetConfig, EvalConfig, GPTConfig, SampleConfig, TrainConfig
from nano_gpt.model import GPT
from nano_gpt.tokenizer import get_tokenizer
from nano_gpt.trainer import WorkerState, compute_loss, create_optimizer
from nano_gpt.trainer import train as nano_train

B, T, ACCUM = 4, 16, 2


class EndOfData(Exception):
    pass


def micro_batches(batches, epochs_run):
    for _ in range(epochs_run):
        for b in batches:
            yield torch.from_numpy(b[0]), torch.from_numpy(b[1])
    raise EndOfData()


def build():
    config = GPTConfig(block_size=T, vocab_size=257, n_layer=1, n_head=2, n_embd=32)
    return GPT(config, get_tokenizer())


def train(model, batches, log, epochs, first=1, last=None, save=None, resume=None):
    steps_per_epoch = len(batches) // ACCUM
    config = TrainConfig(total_batch_size=B * T * ACCUM, micro_batch_size=B, sequence_length=T, max_lr=1e-3,
                         warmup_steps=2, max_steps=steps_per_epoch * epochs, eval_steps=1000,
                         checkpoint_steps=steps_per_epoch, checkpoint_dir=(save + '.d') if save else None,
                         log_file='train.log')
    checkpoint = None
    if resume:
        checkpoint = load_checkpoint(pathlib.Path(resume + '.d') / f'checkpoint_{steps_per_epoch:06d}.bin')
        model.load_state_dict(checkpoint.model_state_dict)
        config = checkpoint.train_config
    optimizer = create_optimizer(model, config, checkpoint, is_cuda=False)
    worker_state = WorkerState('cpu')
    data = micro_batches(batches, (last or epochs) - first + 1)
    try:
        nano_train(model, optimizer, worker_state, config, data,
                   eval_config=EvalConfig(validation_steps=0, hellaswag_samples=0),
                   dataset_config=DatasetConfig(micro_batch_size=B, sequence_length=T),
                   sample_config=SampleConfig(num_return_sequences=0))
    except EndOfData:
        pass
    with open('train.log') as f:
        for line in f:
            if line.startswith('train:'):
                log.append(float(line.split('loss: ')[1].split(' ')[0]))


def evaluate(model, batches):
    model.eval()
    with torch.no_grad():
        loss = compute_loss(model, WorkerState('cpu'), 'val', micro_batches(batches, 1), len(batches), backward=False)
    return [loss]
