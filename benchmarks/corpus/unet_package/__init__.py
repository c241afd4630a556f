__version__ = "0.7.9"

from .unet import UNet, UNet1D, UNet2D, UNet3D

__all__ = [
    "UNet",
    "UNet1D",
    "UNet2D",
    "UNet3D",
]
