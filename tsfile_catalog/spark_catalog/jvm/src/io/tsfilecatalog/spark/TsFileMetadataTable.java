package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.EnumSet;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A metadata table ({@code ts.db.t.history}, {@code .snapshots}, {@code .parts}), as Iceberg
 * serves them: its rows come from the delegate with the table's description, and are read as
 * a local scan, so any client can SELECT, filter and join them with no parser change.
 */
class TsFileMetadataTable implements SupportsRead {
  private final String name;
  private final StructType schema;
  private final JsonNode rows;

  TsFileMetadataTable(JsonNode described) {
    name = described.get("name").asText();
    schema = StructType.fromDDL(described.get("schema").asText());
    rows = described.get("rows");
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  @SuppressWarnings("deprecation") // Table.schema(): what Spark 4.2 and 4.3 both call
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return () -> Aggregates.localScan(schema, rows, "tsfile metadata table " + name);
  }
}
