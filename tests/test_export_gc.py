"""Export garbage collection's filters over versioned export folders (tf.estimator 2.15's gc helpers)."""

from estimators.export import gc


def _paths(*versions):
    return [gc.Path(f"/exports/{v:010d}", v) for v in versions]  # names sort as versions do


def test_largest_export_versions_keeps_the_newest_n_including_version_zero():
    assert gc.largest_export_versions(2)(_paths(0, 3)) == _paths(0, 3)
    assert gc.largest_export_versions(2)(_paths(8, 9, 10)) == _paths(9, 10)


def test_one_of_every_n_keeps_the_largest_version_of_each_interval():
    assert gc.one_of_every_n_export_versions(3)(_paths(0, 1, 3, 5, 6, 7, 8, 33)) == _paths(3, 6, 8, 33)


def test_negation_of_the_kept_filter_lists_what_to_delete():
    assert gc.negation(gc.mod_export_version(2))(_paths(4, 5, 6, 9)) == _paths(5, 9)


def test_union_keeps_what_either_filter_keeps():
    keep = gc.union(gc.largest_export_versions(3), gc.mod_export_version(3))
    assert keep(_paths(*range(10))) == _paths(0, 3, 6, 7, 8, 9)


def test_get_paths_parses_folder_names_and_drops_what_the_parser_refuses(tmp_path):
    for name in ("1", "2", "ignore"):
        (tmp_path / name).mkdir()

    def parser(path):
        name = path.path.rsplit("/", 1)[-1]
        return path._replace(export_version=int(name)) if name.isdigit() else None

    assert gc.get_paths(str(tmp_path), parser) == [gc.Path(str(tmp_path / "1"), 1), gc.Path(str(tmp_path / "2"), 2)]


def test_get_paths_strips_the_trailing_slash_gcs_gives_folder_names(monkeypatch):
    monkeypatch.setattr(gc.gfile, "ListDirectory", lambda base: ["0/", "1/"])

    def parser(path):
        return path._replace(export_version=int(path.path.rsplit("/", 1)[-1]))

    assert gc.get_paths("gs://bucket/foo", parser) == [gc.Path("gs://bucket/foo/0", 0), gc.Path("gs://bucket/foo/1", 1)]
