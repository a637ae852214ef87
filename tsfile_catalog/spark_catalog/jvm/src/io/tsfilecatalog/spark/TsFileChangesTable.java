package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.EnumSet;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The change data feed of a catalog table: the scan the delegate planned ({@code
 * plan_changes}: its schema and the {@code tsfile} source options with {@code
 * readChangeFeed}). Spark filters and projects above it; the rows are the source's.
 */
final class TsFileChangesTable implements SupportsRead {
  private final JsonNode plan;
  private final StructType schema;

  TsFileChangesTable(JsonNode plan) {
    this.plan = plan;
    this.schema = (StructType) DataType.fromJson(plan.get("schema").asText());
  }

  @Override
  public String name() {
    return plan.path("name").asText("tsfile") + " changes";
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return () -> TsFileScanBuilder.scan(plan, null);
  }
}
