"""The ONNX test-data layout the export scripts beside this file write (and vkc's tests read):
FOLDER/test_data_set_N/input_I.pb and output_I.pb, one TensorProto each; and their text reports."""
import os

from onnx import numpy_helper


def save_set(folder, idx, inputs, outputs, input_names=None):
    """Writes data set `idx` of `folder`: the input and output arrays, inputs named when given."""
    d = os.path.join(folder, f"test_data_set_{idx}")
    os.makedirs(d, exist_ok=True)
    for i, a in enumerate(inputs):
        name = input_names[i] if input_names else None
        with open(os.path.join(d, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())
    for i, a in enumerate(outputs):
        with open(os.path.join(d, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a).SerializeToString())


def save_report(path, lines, append=False):
    """Prints a script's report, one line each, and writes it to `path` (after what is there when
    `append`: scripts that export into a folder others export into too)."""
    text = "\n".join(lines)
    print(text)
    with open(path, "a" if append else "w") as f:
        f.write(text + "\n")
