"""Input files -> RGB pictures and model tensors: formats, modes, EXIF, refusals, tensors, preprocessing."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

from inspector.core import InputError, load_input
from inspector.core.inputs.files import open_image, to_rgb
from inspector.core.sources.preprocess import Preprocess


def _blocks() -> np.ndarray:
    """A 16x24 RGB picture of four solid 8x12 quadrants (survives lossy codecs)."""
    a = np.zeros((16, 24, 3), np.uint8)
    a[:8, :12] = (255, 0, 0)
    a[:8, 12:] = (0, 255, 0)
    a[8:, :12] = (0, 0, 255)
    a[8:, 12:] = (255, 255, 255)
    return a


# -- formats ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "suffix, lossy",
    [(".png", False), (".bmp", False), (".tif", False), (".gif", False), (".webp", False), (".jpg", True)],
)
def test_formats_open_as_rgb(tmp_path, suffix, lossy):
    a = _blocks()
    path = tmp_path / f"img{suffix}"
    kwargs = {"lossless": True} if suffix == ".webp" else {}
    Image.fromarray(a).save(path, **kwargs)
    image = open_image(path)
    assert image.mode == "RGB" and image.size == (24, 16)
    got = np.asarray(image).astype(int)
    if lossy:
        # JPEG: compare the centre of each quadrant, away from block edges
        for (r, c) in [(3, 4), (3, 18), (12, 4), (12, 18)]:
            assert np.abs(got[r, c] - a[r, c]).max() <= 12
    else:
        np.testing.assert_array_equal(got, a)


def test_gif_uses_first_frame(tmp_path):
    path = tmp_path / "anim.gif"
    red = Image.new("RGB", (8, 6), (255, 0, 0))
    blue = Image.new("RGB", (8, 6), (0, 0, 255))
    red.save(path, save_all=True, append_images=[blue], duration=100, loop=0)
    with Image.open(path) as check:
        assert check.n_frames == 2
    got = np.asarray(open_image(path))
    assert got.shape == (6, 8, 3)
    assert (got == (255, 0, 0)).all()


def test_exif_orientation_6_rotates(tmp_path):
    # 64 wide x 32 high: left half red, right half blue. Orientation 6 = rotate 90 deg clockwise to view.
    a = np.zeros((32, 64, 3), np.uint8)
    a[:, :32] = (255, 0, 0)
    a[:, 32:] = (0, 0, 255)
    exif = Image.Exif()
    exif[0x0112] = 6
    path = tmp_path / "rot.jpg"
    Image.fromarray(a).save(path, exif=exif, quality=95)
    image = open_image(path)
    assert image.size == (32, 64)  # width/height swapped
    got = np.asarray(image).astype(int)
    # clockwise: the left half (red) ends up on top, the right half (blue) at the bottom
    assert np.abs(got[8, 16] - (255, 0, 0)).max() <= 10
    assert np.abs(got[56, 16] - (0, 0, 255)).max() <= 10


# -- modes ------------------------------------------------------------------------
def test_mode_1_and_L():
    bits = Image.fromarray(np.array([[0, 1], [1, 0]], bool))
    assert bits.mode == "1"
    np.testing.assert_array_equal(np.asarray(to_rgb(bits))[..., 0], [[0, 255], [255, 0]])
    gray = Image.fromarray(np.array([[0, 77, 200]], np.uint8), "L")
    got = np.asarray(to_rgb(gray))
    assert got.shape == (1, 3, 3)
    np.testing.assert_array_equal(got, np.repeat(np.array([[0, 77, 200]])[..., None], 3, axis=2))


def test_mode_LA_composited_on_white():
    la = Image.fromarray(np.array([[[0, 255], [0, 0], [100, 128]]], np.uint8), "LA")
    got = np.asarray(to_rgb(la)).astype(int)
    assert got.shape == (1, 3, 3)
    np.testing.assert_array_equal(got[0, 0], (0, 0, 0))  # opaque black
    np.testing.assert_array_equal(got[0, 1], (255, 255, 255))  # transparent -> white
    # half alpha: 100*128/255 + 255*127/255 = 50.2 + 127 = 177.2
    assert np.abs(got[0, 2] - 177).max() <= 1


def test_mode_RGBA_composited_on_white():
    px = np.array([[[10, 20, 30, 255], [200, 0, 0, 0], [0, 0, 0, 128]]], np.uint8)
    got = np.asarray(to_rgb(Image.fromarray(px, "RGBA"))).astype(int)
    np.testing.assert_array_equal(got[0, 0], (10, 20, 30))
    np.testing.assert_array_equal(got[0, 1], (255, 255, 255))  # colour under alpha 0 is dropped
    assert np.abs(got[0, 2] - 127).max() <= 1  # black at alpha 128: 255*127/255


def test_mode_P_without_and_with_transparency(tmp_path):
    palette = [255, 0, 0, 0, 255, 0, 0, 0, 255] + [0] * (256 * 3 - 9)
    p = Image.fromarray(np.array([[0, 1, 2]], np.uint8), "P")
    p.putpalette(palette)
    np.testing.assert_array_equal(np.asarray(to_rgb(p)), [[[255, 0, 0], [0, 255, 0], [0, 0, 255]]])
    # index 1 transparent, written through a PNG so the info comes from the file
    path = tmp_path / "p.png"
    p.save(path, transparency=1)
    with Image.open(path) as check:
        assert check.mode == "P" and "transparency" in check.info
    np.testing.assert_array_equal(np.asarray(open_image(path)), [[[255, 0, 0], [255, 255, 255], [0, 0, 255]]])


def test_mode_CMYK():
    cmyk = Image.frombytes("CMYK", (4, 1), bytes([0, 0, 0, 0, 255, 0, 0, 0, 0, 0, 0, 255, 0, 128, 0, 0]))
    got = np.asarray(to_rgb(cmyk)).astype(int)
    np.testing.assert_array_equal(got[0, 0], (255, 255, 255))
    np.testing.assert_array_equal(got[0, 1], (0, 255, 255))  # full cyan
    np.testing.assert_array_equal(got[0, 2], (0, 0, 0))  # full black
    assert abs(got[0, 3, 1] - 127) <= 1 and got[0, 3, 0] == 255 and got[0, 3, 2] == 255


def test_mode_I16_scaled_over_16_bits(tmp_path):
    path = tmp_path / "deep.png"
    Image.fromarray(np.array([[0, 256, 32768, 65535]], np.uint16)).save(path)
    with Image.open(path) as check:
        assert check.mode.startswith("I")
    got = np.asarray(open_image(path))[0, :, 0].astype(int)
    assert got[0] == 0 and got[3] == 255
    assert got[1] == 1  # 256/65535*255 = 0.996, not clipped to 255
    assert abs(got[2] - 128) <= 1


def test_mode_F_rescaled_min_to_max(tmp_path):
    path = tmp_path / "float.tif"
    Image.fromarray(np.array([[-2.0, 0.0, 2.0, 6.0]], np.float32)).save(path)
    with Image.open(path) as check:
        assert check.mode == "F"
    got = np.asarray(open_image(path))[0, :, 0].astype(int)
    # (v + 2) / 8 * 255: 0, 63.75, 127.5, 255
    assert got[0] == 0 and got[3] == 255
    assert abs(got[1] - 64) <= 1 and abs(got[2] - 128) <= 1


# -- refusals ---------------------------------------------------------------------
def test_decompression_bomb_refused(tmp_path, monkeypatch):
    path = tmp_path / "big.png"
    Image.new("RGB", (100, 100), (1, 2, 3)).save(path)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # 10,000 px > 2x the limit: an error
    with pytest.raises(InputError, match="decompression bomb"):
        open_image(path)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 6000)  # between 1x and 2x: only a warning in Pillow
    with pytest.raises(InputError, match="too large"):
        open_image(path)


def test_huge_dimension_header_refused(tmp_path):
    # a valid PNG header claiming 100000 x 100000 pixels, no data to back it
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 10)) + chunk(b"IEND", b"")
    path = tmp_path / "bomb.png"
    path.write_bytes(data)
    with pytest.raises(InputError, match="too large"):
        load_input(path)


def test_zero_byte_file_refused(tmp_path):
    path = tmp_path / "empty.png"
    path.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        load_input(path)


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_truncated_image_refused(tmp_path, fmt):
    rng = np.random.default_rng(0)
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, (64, 64, 3), dtype=np.uint8)).save(buf, fmt)
    data = buf.getvalue()
    path = tmp_path / f"cut.{fmt.lower()}"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="damaged or truncated") as info:
        open_image(path)
    assert path.name in str(info.value)


def test_text_file_named_png_refused(tmp_path):
    path = tmp_path / "notes.png"
    path.write_text("this is not a picture\n")
    with pytest.raises(InputError, match="not an image") as info:
        load_input(path)
    assert "notes.png" in str(info.value)


def test_missing_file_refused(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_input(tmp_path / "nope.png")
    with pytest.raises(InputError, match="not found"):
        load_input(tmp_path / "nope.npy")


def test_non_ascii_path(tmp_path):
    folder = tmp_path / "图像 ü"
    folder.mkdir()
    path = folder / "ö.png"
    Image.new("RGB", (5, 3), (10, 20, 30)).save(path)
    x = load_input(path)
    assert x.shape == (1, 3, 3, 5)
    torch.testing.assert_close(x[0, :, 0, 0], torch.tensor([10, 20, 30]) / 255.0)


# -- tensors ----------------------------------------------------------------------
def test_npy_float64_becomes_float32(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.array([[1.5, -2.0, 3.25]], np.float64))
    x = load_input(path)
    assert x.dtype == torch.float32
    torch.testing.assert_close(x, torch.tensor([[1.5, -2.0, 3.25]]))
    # a missing batch dimension is added when the model's input shape says so
    np.save(path, np.ones((3, 2, 2), np.float32))
    assert load_input(path, input_shape=(1, 3, 2, 2)).shape == (1, 3, 2, 2)


def test_npy_with_objects_refused(tmp_path):
    path = tmp_path / "obj.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match="obj.npy"):
        load_input(path)


def test_pt_tensor_loads(tmp_path):
    path = tmp_path / "x.pt"
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    torch.save(t, path)
    torch.testing.assert_close(load_input(path), t)


def test_pt_non_tensor_refused(tmp_path):
    path = tmp_path / "d.pt"
    torch.save({"a": torch.zeros(2)}, path)
    with pytest.raises(InputError, match="holds a dict, not a tensor"):
        load_input(path)


class _Payload:
    def __init__(self):
        self.value = 3


def test_pt_pickled_object_refused(tmp_path):
    path = tmp_path / "obj.pt"
    torch.save(_Payload(), path)
    with pytest.raises(InputError, match="obj.pt is a pickle that would import code when loaded") as info:
        load_input(path)
    assert "_Payload" in str(info.value) and "weights_only" not in str(info.value)


# -- preprocessing ----------------------------------------------------------------
def test_preprocess_matches_hand_computation():
    # 12 wide x 4 high, made of 2x2 solid blocks: block (r, c) has value 10*c + 100*r (+channel offset)
    blocks = np.zeros((2, 6, 3), np.uint8)
    for r in range(2):
        for c in range(6):
            blocks[r, c] = (10 * c + 100 * r, 5 + c, 200 - 20 * c)
    image = Image.fromarray(np.repeat(np.repeat(blocks, 2, axis=0), 2, axis=1))
    assert image.size == (12, 4)
    mean, std = (0.5, 0.25, 0.1), (0.2, 0.5, 1.0)
    prep = Preprocess(resize=2, crop=2, mean=mean, std=std, interpolation="nearest")
    x = prep(image)
    assert x.shape == (1, 3, 2, 2) and x.dtype == torch.float32
    # short side 4 -> 2: the picture becomes the 6x2 block grid; centre crop 2 starts at column (6-2)//2 = 2
    kept = blocks[:, 2:4].astype(np.float64)
    expected = (kept / 255.0 - np.array(mean)) / np.array(std)
    np.testing.assert_allclose(x[0].permute(1, 2, 0).numpy(), expected, atol=1e-6)
    # to_display undoes the normalisation: exactly the cropped pixels
    np.testing.assert_array_equal(prep.to_display(x), blocks[:, 2:4])
    assert prep.input_shape == (1, 3, 2, 2)


def test_preprocess_bilinear_resize_keeps_aspect():
    image = Image.new("RGB", (30, 20), (51, 102, 204))
    x = Preprocess(resize=10)(image)
    assert x.shape == (1, 3, 10, 15)  # short side 20 -> 10, long side 30 -> 15
    torch.testing.assert_close(x[0, :, 5, 7], torch.tensor([0.2, 0.4, 0.8]))


def test_load_input_default_preprocess_from_input_shape(tmp_path):
    path = tmp_path / "wide.png"
    a = np.zeros((8, 16, 3), np.uint8)
    a[:, 4:12] = 255  # the centre square is white, the sides black
    Image.fromarray(a).save(path)
    x = load_input(path, input_shape=(1, 3, 8, 8))
    assert x.shape == (1, 3, 8, 8)
    assert torch.all(x == 1.0)
