//! `engine models install` and `engine doctor` for a binary away from its checkout: installed
//! into an empty per-user data directory by the installer built into the binary (from the
//! registries, as `scripts/fetch-models.sh` does), found there first, and searched with.

use crate::common::*;

#[test]
fn a_binary_outside_the_checkout_installs_its_models_and_answers_hybrid_searches() {
    let dir = tempfile::tempdir().unwrap();
    let (home, bin_dir, project) = (dir.path().join("home"), dir.path().join("bin"), dir.path().join("project"));
    for d in [&home, &bin_dir] {
        std::fs::create_dir_all(d).unwrap();
    }
    let exe = bin_dir.join("engine");
    std::fs::copy(bin(), &exe).unwrap();
    copy_dir(&root().join("sample"), &project);
    let user_models = home.join(".local/share/engine/models");

    let (code, out, err) = engine_as_user(&exe, &home, &["models", "install"], &project);
    assert_eq!(code, 0, "{out}{err}");
    assert!(user_models.join("models.toml").is_file() && user_models.join("model.onnx").is_file(), "{out}{err}");
    // The per-user directory comes first: the doctor names it, and every required part is there.
    let (code, out, err) = engine_as_user(&exe, &home, &["doctor"], &project);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("models     {}", user_models.display())), "{out}");
    assert!(out.contains("(default): installed") && out.contains("the default embedder loads"), "{out}");
    assert!(out.contains("not installed (optional: engine models install --reranker)"), "{out}");

    let (code, _, err) = engine_as_user(&exe, &home, &["index", "."], &project);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) =
        engine_as_user(&exe, &home, &["search", "--no-daemon", "--json", "why", "redis", "sessions"], &project);
    assert_eq!(code, 0, "{err}");
    let resp = json(&out);
    assert_eq!(resp["degraded"], false, "answered from BM25 only: {err}");
    assert!(resp["results"][0]["path"].as_str().is_some(), "{out}");

    // A damaged file is named by the doctor, with the fix, and exit 3 (models).
    std::fs::write(user_models.join("tokenizer.json"), b"{}").unwrap();
    let (code, out, err) = engine_as_user(&exe, &home, &["doctor"], &project);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("tokenizer.json") && err.contains("engine models install"), "{out}{err}");
}
