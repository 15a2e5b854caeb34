// The virtualised photo grid. Tiles create object URLs for local previews and must revoke them
// when they unmount, or scrolling a large album leaks gigabytes.

import { useEffect, useMemo, useState } from "react";

export interface Tile {
  photoId: string;
  thumbUrl?: string;
  localFile?: File;
}

export function visibleRange(scrollTop: number, viewportHeight: number, rowHeight: number, columns: number, total: number) {
  const firstRow = Math.max(Math.floor(scrollTop / rowHeight) - 2, 0);
  const lastRow = Math.ceil((scrollTop + viewportHeight) / rowHeight) + 2;
  return { start: firstRow * columns, end: Math.min(lastRow * columns, total) };
}

export function usePreviewUrl(tile: Tile): string | undefined {
  const [url, setUrl] = useState<string | undefined>(tile.thumbUrl);
  useEffect(() => {
    if (!tile.localFile) return;
    const objectUrl = URL.createObjectURL(tile.localFile);
    setUrl(objectUrl);
    return () => URL.revokeObjectURL(objectUrl);
  }, [tile.localFile]);
  return url;
}

export function PhotoGrid({ tiles, columns, rowHeight, scrollTop, viewportHeight }: {
  tiles: Tile[];
  columns: number;
  rowHeight: number;
  scrollTop: number;
  viewportHeight: number;
}) {
  const { start, end } = useMemo(
    () => visibleRange(scrollTop, viewportHeight, rowHeight, columns, tiles.length),
    [scrollTop, viewportHeight, rowHeight, columns, tiles.length],
  );
  return (
    <div className="grid" style={{ height: Math.ceil(tiles.length / columns) * rowHeight }}>
      {tiles.slice(start, end).map((t) => (
        <PhotoTile key={t.photoId} tile={t} />
      ))}
    </div>
  );
}

function PhotoTile({ tile }: { tile: Tile }) {
  const url = usePreviewUrl(tile);
  return <img className="tile" src={url} loading="lazy" alt="" />;
}
