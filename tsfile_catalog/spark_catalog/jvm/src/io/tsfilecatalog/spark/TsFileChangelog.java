package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.spark.sql.connector.catalog.Changelog;
import org.apache.spark.sql.connector.catalog.ChangelogContext;
import org.apache.spark.sql.connector.catalog.ChangelogRange;
import org.apache.spark.sql.connector.catalog.CatalogV2Util;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Spark's {@code Changelog} of a catalog table ({@code SELECT ... FROM t CHANGES FROM VERSION a
 * [TO VERSION b]}, SPARK-55948): the delegate's changes scan ({@code plan_changes}), which
 * already holds update pre- and post-images and no copy-on-write carry-over rows, so Spark
 * post-processes nothing (no row id); a net-changes request is answered by the scan itself.
 */
final class TsFileChangelog implements Changelog {
  private final TsFileChangesTable table;

  private TsFileChangelog(TsFileChangesTable table) {
    this.table = table;
  }

  /** The changelog {@code request} (the table's) asks for, over {@code context}'s range. */
  static Changelog load(ObjectNode request, ChangelogContext context, CaseInsensitiveStringMap options) {
    ObjectNode range = Client.object();
    ChangelogRange given = context.range();
    if (given instanceof ChangelogRange.VersionRange) {
      ChangelogRange.VersionRange versions = (ChangelogRange.VersionRange) given;
      range.put("kind", "version");
      range.put("start", versions.startingVersion());
      range.put("end", versions.endingVersion().orElse(null));
    } else if (given instanceof ChangelogRange.TimestampRange) {
      ChangelogRange.TimestampRange times = (ChangelogRange.TimestampRange) given;
      range.put("kind", "timestamp");
      range.put("start_us", times.startingTimestamp());
      if (times.endingTimestamp().isPresent()) {
        range.put("end_us", times.endingTimestamp().get());
      }
    } else {
      range.put("kind", "unbounded");
    }
    range.put("start_inclusive", given.startingBoundInclusive());
    range.put("end_inclusive", given.endingBoundInclusive());
    range.put("deduplication", context.deduplicationMode().name());
    request.set("changelog", range);
    request.set("options", Client.map(options.asCaseSensitiveMap()));
    JsonNode plan = Client.call("plan_changes", request);
    return new TsFileChangelog(new TsFileChangesTable(plan));
  }

  @Override
  public String name() {
    return table.name();
  }

  @Override
  @SuppressWarnings("deprecation")
  public Column[] columns() {
    return CatalogV2Util.structTypeToV2Columns(table.schema(), false);
  }

  @Override
  public boolean containsCarryoverRows() {
    return false;
  }

  @Override
  public boolean containsIntermediateChanges() {
    return false;
  }

  @Override
  public boolean representsUpdateAsDeleteAndInsert() {
    return false;
  }

  @Override
  public NamedReference[] rowId() {
    return new NamedReference[0];
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return table.newScanBuilder(options);
  }
}
